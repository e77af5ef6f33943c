"""The mock's structured-output answers: always a valid instance of the request's JSON Schema,
with top-level arrays of objects filled from the request's capitalised words. The schemas are
shaped like the ones Graphiti (graphiti-core 0.31) sends, written out here so the test needs no
Graphiti; the server path is tested over HTTP with a real mock process."""

from __future__ import annotations

import json
from typing import Any

import httpx
import jsonschema
import pytest

from memeval.servers.launch import start_server
from memeval.servers.mock_inference.models import names_in, schema_instance, subject_text

ENTITIES = {
    "$defs": {"ExtractedEntity": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "entity_type_id": {"type": "integer"},
                       "episode_indices": {"type": "array", "items": {"type": "integer"}}},
        "required": ["name", "entity_type_id"]}},
    "type": "object",
    "properties": {"extracted_entities": {"type": "array", "items": {"$ref": "#/$defs/ExtractedEntity"}}},
    "required": ["extracted_entities"],
}
EDGES = {
    "$defs": {"Edge": {
        "type": "object",
        "properties": {"source_entity_name": {"type": "string"}, "target_entity_name": {"type": "string"},
                       "relation_type": {"type": "string"}, "fact": {"type": "string"},
                       "valid_at": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}},
        "required": ["source_entity_name", "target_entity_name", "relation_type", "fact"]}},
    "type": "object",
    "properties": {"edges": {"type": "array", "items": {"$ref": "#/$defs/Edge"}}},
    "required": ["edges"],
}
TIMESTAMPS = {"type": "object", "properties": {
    "valid_at": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
    "invalid_at": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}}}
SENTENCE = "Alice moved to Paris with Bob."


def prompt(body: str) -> list[dict[str, Any]]:
    user = ("NEVER extract pronouns.\n<PREVIOUS MESSAGES>\n[]\n</PREVIOUS MESSAGES>\n"
            f"<CURRENT MESSAGE>\n{body}\n</CURRENT MESSAGE>")
    return [{"role": "system", "content": "You are an Extraction specialist."}, {"role": "user", "content": user}]


@pytest.mark.parametrize("schema", [ENTITIES, EDGES, TIMESTAMPS])
@pytest.mark.parametrize("text", [SENTENCE, "", "no capitals here", "Only"])
def test_every_instance_validates_against_its_schema(schema: dict[str, Any], text: str):
    jsonschema.validate(schema_instance(schema, text), schema)


def test_entities_are_the_capitalised_words_of_the_current_message():
    text = subject_text(prompt(SENTENCE))
    assert text == SENTENCE
    assert schema_instance(ENTITIES, text) == {"extracted_entities": [
        {"name": n, "entity_type_id": 0, "episode_indices": []} for n in ("Alice", "Paris", "Bob")]}


def test_edges_link_neighbouring_names_with_the_sentence_as_fact():
    edges = schema_instance(EDGES, SENTENCE)["edges"]
    assert [(e["source_entity_name"], e["target_entity_name"]) for e in edges] == [("Alice", "Paris"), ("Paris", "Bob")]
    assert {e["fact"] for e in edges} == {SENTENCE} and all(e["valid_at"] is None for e in edges)
    assert schema_instance(EDGES, "Only Alice.") == {"edges": []}  # one name: no pair to link


def test_defaults_win_and_nothing_is_filled_without_names():
    assert schema_instance(TIMESTAMPS, SENTENCE) == {"valid_at": None, "invalid_at": None}
    assert schema_instance(ENTITIES, "all lower case") == {"extracted_entities": []}


def test_names_skip_stopwords_repeats_and_join_runs():
    assert names_in("The cat of New York met Alice. Then Alice's dog, I think, met Bob\nSmith.") == [
        "New York", "Alice", "Bob", "Smith"]
    assert names_in("What about it") == []


def test_subject_prefers_the_current_message_then_a_messages_section():
    both = [{"role": "user", "content": "<MESSAGES>\nAnn earlier\n</MESSAGES>\n<CURRENT_MESSAGE>Ben now</CURRENT_MESSAGE>"}]
    assert subject_text(both) == "Ben now"
    summary = [{"role": "user", "content": "Guidelines: Keep it short.\n<MESSAGES>\n\"Cy met Di\"\n</MESSAGES>"}]
    assert names_in(subject_text(summary)) == ["Cy", "Di"]


def test_subject_falls_back_to_the_last_user_message():
    messages = [{"role": "user", "content": "first"}, {"role": "assistant", "content": "x"},
                {"role": "user", "content": "Ann met Ben"}]
    assert subject_text(messages) == "Ann met Ben"
    assert schema_instance(ENTITIES, subject_text(messages))["extracted_entities"][1]["name"] == "Ben"
    assert subject_text([{"role": "system", "content": "only system"}]) == ""


def test_items_are_capped():
    many = " and ".join(f"Name{i}" for i in range(20))
    assert len(schema_instance(ENTITIES, many)["extracted_entities"]) == 8


@pytest.mark.slow
def test_the_server_answers_a_json_schema_call_from_the_current_message():
    with start_server("mock_inference") as server:
        body = {"model": "mock-chat", "messages": prompt(SENTENCE),
                "response_format": {"type": "json_schema", "json_schema": {"name": "ExtractedEdges", "schema": EDGES}}}
        reply = httpx.post(server.url + "/v1/chat/completions", json=body, timeout=10)
    assert reply.status_code == 200
    answer = json.loads(reply.json()["choices"][0]["message"]["content"])
    jsonschema.validate(answer, EDGES)
    assert [e["source_entity_name"] for e in answer["edges"]] == ["Alice", "Paris"]
