"""The mock inference server as a real process, through httpx and the openai client."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import openai
import pytest

from memeval.servers.launch import RunningServer, start_server
from memeval.servers.mock_inference.models import schema_instance

pytestmark = pytest.mark.slow  # every test here starts a process or uses one a fixture started

PACK = """## Brain
- [2026-09-01 09:00] user: The staging database runs Postgres 16.
- [2026-09-02 10:30] assistant: Deploys happen every Friday afternoon.
- Alice moved to Berlin in March.

Question: Which database version does staging run?"""


@pytest.fixture(scope="module")
def mock() -> Iterator[RunningServer]:
    with start_server("mock_inference") as server:
        yield server


@pytest.fixture
def http(mock: RunningServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=mock.url, timeout=10) as client:
        yield client
        client.post("/_mock/faults", json={"clear": True})


def _chat(http: httpx.Client, messages: list[dict], **extra: object) -> httpx.Response:
    return http.post("/v1/chat/completions", json={"model": "mock-chat", "messages": messages, **extra})


def _answer(http: httpx.Client, messages: list[dict]) -> str:
    reply = _chat(http, messages)
    assert reply.status_code == 200, reply.text
    return reply.json()["choices"][0]["message"]["content"]


def test_health_and_models(http: httpx.Client) -> None:
    assert http.get("/health").json() == {"status": "ok"}
    assert http.get("/v1/models").json() == {
        "object": "list",
        "data": [{"id": "mock-chat", "object": "model"}, {"id": "mock-embed", "object": "model"}],
    }


def _vectors(http: httpx.Client, inputs: object, **extra: object) -> list[list[float]]:
    reply = http.post("/v1/embeddings", json={"model": "mock-embed", "input": inputs, **extra})
    assert reply.status_code == 200, reply.text
    return [d["embedding"] for d in reply.json()["data"]]


def test_embeddings_are_deterministic_unit_vectors_closer_for_similar_texts(http: httpx.Client) -> None:
    base, similar, other, again = _vectors(
        http,
        ["the deploy runs on friday", "deploys run on fridays", "alice likes green tea", "the deploy runs on friday"],
    )
    assert base == again and len(base) == 256
    assert math.isclose(sum(x * x for x in base), 1.0)

    def cosine(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cosine(base, similar) > cosine(base, other)
    assert len(_vectors(http, "one text", dimensions=64)[0]) == 64
    reply = http.post("/v1/embeddings", json={"input": "x"}).json()
    assert reply["object"] == "list" and reply["usage"]["total_tokens"] >= 1 and reply["usage"]["cost"] == 0.0


def test_the_openai_client_works_against_it_including_base64_embeddings(mock: RunningServer) -> None:
    client = openai.OpenAI(base_url=f"{mock.url}/v1", api_key="unused", max_retries=0)
    vector = client.embeddings.create(model="mock-embed", input="the deploy runs on friday").data[0].embedding
    with httpx.Client(base_url=mock.url) as http:
        assert vector == pytest.approx(_vectors(http, "the deploy runs on friday")[0], abs=1e-6)
    completion = client.chat.completions.create(model="mock-chat", messages=[{"role": "user", "content": PACK}])
    assert completion.choices[0].message.content == "The staging database runs Postgres 16."


def test_chat_answers_with_the_best_matching_context_line(http: httpx.Client) -> None:
    reply = _chat(http, [{"role": "system", "content": "Answer from the context."}, {"role": "user", "content": PACK}])
    body = reply.json()
    assert body["object"] == "chat.completion" and body["model"] == "mock-chat"
    assert body["choices"] == [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "The staging database runs Postgres 16."},
            "finish_reason": "stop",
        }
    ]
    usage = body["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert usage["cost"] == 0.0


def test_the_mock_names_itself_whatever_model_was_asked_for(http: httpx.Client) -> None:
    asked = http.post("/v1/chat/completions", json={"model": "openai/gpt-4.1-mini",
                                                    "messages": [{"role": "user", "content": PACK}]})
    assert asked.json()["model"] == "mock-chat" and asked.json()["usage"]["cost"] == 0.0
    embedded = http.post("/v1/embeddings", json={"model": "text-embedding-3-small", "input": "a"})
    assert embedded.json()["model"] == "mock-embed"


def test_chat_without_a_question_marker_uses_the_last_user_message(http: httpx.Client) -> None:
    messages = [
        {"role": "system", "content": PACK.split("Question:")[0]},
        {"role": "user", "content": "Where did Alice move?"},
    ]
    assert _answer(http, messages) == "Alice moved to Berlin in March."


def test_chat_says_unknown_when_no_line_shares_a_content_word(http: httpx.Client) -> None:
    context = PACK.split("Question:")[0]
    assert _answer(http, [{"role": "user", "content": context + "Question: What colour is the sky?"}]) == "unknown"


def test_structured_output_is_an_empty_extraction(http: httpx.Client) -> None:
    schema = {
        "type": "object",
        "properties": {
            "facts": {"type": "array", "items": {"type": "string"}},
            "kind": {"type": "string", "enum": ["preference", "event"]},
            "subject": {"type": ["string", "null"]},
            "score": {"type": "number"},
            "final": {"type": "boolean"},
            "nested": {"$ref": "#/$defs/Nested"},
        },
        "$defs": {"Nested": {"type": "object", "properties": {"count": {"type": "integer"}}}},
    }
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    content = _chat(http, [{"role": "user", "content": "extract"}], response_format=fmt).json()
    assert json.loads(content["choices"][0]["message"]["content"]) == {
        "facts": [],
        "kind": "preference",
        "subject": "mock",
        "score": 0,
        "final": False,
        "nested": {"count": 0},
    }
    plain = _chat(http, [{"role": "user", "content": "x"}], response_format={"type": "json_object"}).json()
    assert plain["choices"][0]["message"]["content"] == "{}"
    assert schema_instance({"anyOf": [{"const": 3}, {"type": "string"}]}) == 3


def test_injected_failures_use_openai_error_bodies_and_the_stats_count_calls(http: httpx.Client) -> None:
    http.delete("/_mock/stats")
    http.post("/_mock/faults", json={"fail": [{"status": 429, "count": 1}, {"status": 403}]})
    limited = _chat(http, [{"role": "user", "content": "hi"}])
    assert limited.status_code == 429 and limited.headers["retry-after"] == "1"
    assert limited.json()["error"]["type"] == "rate_limit_error"
    forbidden = _chat(http, [{"role": "user", "content": "hi"}])
    assert forbidden.status_code == 403 and set(forbidden.json()["error"]) == {"message", "type", "param", "code"}
    assert _chat(http, [{"role": "user", "content": "hi"}]).status_code == 200
    _vectors(http, "x")
    assert http.get("/_mock/stats").json() == {"calls": {"chat": 3, "embeddings": 1, "models": 0, "health": 0}}


def test_latency_knob_delays_model_calls(http: httpx.Client) -> None:
    assert http.post("/_mock/faults", json={"latency": 0.2}).json() == {"fail": [], "latency": 0.2}
    assert _chat(http, [{"role": "user", "content": "hi"}]).elapsed.total_seconds() >= 0.2
    assert http.post("/_mock/faults", json={"latency": -1}).status_code == 400
    for number in ("NaN", "Infinity"):  # JSON as Python writes it: refused, not slept on
        body = '{"latency": %s}' % number
        assert http.post("/_mock/faults", content=body, headers={"content-type": "application/json"}).status_code == 400


def test_a_fault_set_while_a_call_sleeps_is_left_for_the_next_call(mock: RunningServer, http: httpx.Client) -> None:
    """A call that arrived before a fault was set (here: still in its latency sleep when a client
    clears the faults and sets a one-shot 403) answers 200; the 403 goes to the next call."""
    http.post("/_mock/faults", json={"latency": 0.6})
    messages = [{"role": "user", "content": PACK}]
    before = http.get("/_mock/stats").json()["calls"]["chat"]
    with ThreadPoolExecutor(1) as pool:
        early = pool.submit(_chat, http, messages)
        _until(lambda: http.get("/_mock/stats").json()["calls"]["chat"] > before)  # the early call arrived: it sleeps
        http.post("/_mock/faults", json={"clear": True, "fail": [{"status": 403}]})
        assert early.result(timeout=10).status_code == 200
    assert _chat(http, messages).status_code == 403
    assert _chat(http, messages).status_code == 200


def _until(condition: Callable[[], bool]) -> None:
    """Poll ``condition`` until it holds: synchronised on the server's state, not on a time
    window (the deadline only stops a test that would hang)."""
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.01)


def test_memeval_serve_runs_in_the_foreground_until_sigterm() -> None:
    command = [sys.executable, "-c", "from memeval.cli import main; main()", "serve", "mock-inference", "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("mock-inference listening on http://127.0.0.1:")
        assert httpx.get(line.split(" on ")[1].strip() + "/health").status_code == 200
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=300) == 0
    finally:
        process.kill()
        process.wait()


def test_sigterm_stops_the_server_while_requests_keep_arriving() -> None:
    """A signal that lands while the server starts a request's thread still stops it: the
    handler once raised into socketserver's own code, which printed the error and served on.

    The signal is sent once the server has answered a few requests and while four clients keep
    sending more: synchronised on that count, not on a time window, so a loaded machine only
    makes it slower."""
    command = [sys.executable, "-c", "from memeval.cli import main; main()", "serve", "mock-inference", "--port", "0"]
    for _ in range(3):
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        done, arriving = threading.Event(), threading.Event()
        served = [0]
        lock = threading.Lock()
        pool = ThreadPoolExecutor(4)
        try:
            assert process.stdout is not None
            url = process.stdout.readline().split(" on ")[1].strip() + "/health"

            def hammer() -> None:
                with httpx.Client(timeout=30) as client:
                    while not done.is_set() and process.poll() is None:
                        try:
                            client.get(url)
                        except httpx.HTTPError:
                            continue
                        with lock:
                            served[0] += 1
                            if served[0] >= 8:
                                arriving.set()

            calls = [pool.submit(hammer) for _ in range(4)]
            assert arriving.wait(timeout=300), "the server answered fewer than 8 requests"  # a hang guard only
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=300) == 0
            for call in calls:
                call.result(timeout=300)
            _, stderr = process.communicate(timeout=60)
            assert "Traceback" not in stderr
        finally:
            done.set()
            process.kill()
            process.wait()
            pool.shutdown()
