"""Binding an MCP server's tools to the lifecycle calls, and reading their answers (no process)."""

from __future__ import annotations

from typing import Any

import pytest

from memeval.engines.base import MemoryItem, ToolCallRef
from memeval.engines.mcp.records import (Malformed, Record, answer_json, count_of, cursor_of, id_of, item_metadata,
                                         item_of, records_of)
from memeval.engines.mcp.session import ToolSpec
from memeval.engines.mcp.tools import bind
from memeval.errors import UsageError


def tool(name: str, description: str = "", required: tuple[str, ...] = (), **props: Any) -> ToolSpec:
    return ToolSpec(name, description, {k: v for k, v in props.items()}, required)


STR, OBJ, ARR, INT = {"type": "string"}, {"type": "object"}, {"type": "array"}, {"type": "integer"}
MEM0_LIKE = [
    tool("add_memories", required=("text",), text=STR, user_id=STR, metadata=OBJ),
    tool("search_memory", required=("query",), query=STR, user_id=STR, limit=INT),
    tool("delete_memories", required=("memory_ids",), memory_ids=ARR, user_id=STR),
    tool("list_memories", user_id=STR),
    tool("delete_all_memories", user_id=STR),
]


def test_discovery_by_name_binds_each_call_to_one_tool_and_its_arguments() -> None:
    bound = bind(MEM0_LIKE, {}, {})
    assert {c: b.describe() for c, b in bound.items()} == {
        "write": "add_memories(text=text, tenant=user_id, metadata=metadata)",
        "recall": "search_memory(query=query, tenant=user_id, limit=limit)",
        "list": "list_memories(tenant=user_id)",
        "forget": "delete_memories(ids=memory_ids, tenant=user_id)",
    }
    assert bound["recall"].query_required


def test_discovery_falls_back_to_descriptions_and_prefers_tools_about_memory() -> None:
    tools = [tool("ingest_doc", "Keep a fact", required=("content",), content=STR),
             tool("put", "Remember a note for later", required=("content",), content=STR, namespace=STR),
             tool("lookup", "Search the memory store", query=STR),
             tool("advanced_search", query=STR), tool("memory_search", query=STR)]
    bound = bind(tools, {}, {})
    assert bound["write"].tool == "ingest_doc"  # by name ("ingest") before any description
    assert bound["recall"].tool == "memory_search" and not bound["recall"].query_required


def test_a_tool_whose_required_arguments_cannot_be_filled_is_passed_over_unless_fixed() -> None:
    tools = [tool("memory_store", required=("content",), content=STR),
             tool("memory_search", required=("query",), query=STR),
             tool("memory_delete", required=("episode_id", "reason"), episode_id=STR, reason=STR)]
    assert "forget" not in bind(tools, {}, {})
    fixed = bind(tools, {}, {"memory_delete": {"reason": "memeval"}})
    assert fixed["forget"].describe() == "memory_delete(id=episode_id)" and fixed["forget"].fixed == {"reason": "memeval"}


def test_named_tools_must_exist_and_fit_and_write_and_recall_must_be_found() -> None:
    with pytest.raises(UsageError, match="does not list"):
        bind(MEM0_LIKE, {"recall": "nope"}, {})
    with pytest.raises(UsageError, match="cannot serve forget"):
        bind(MEM0_LIKE, {"forget": "search_memory"}, {})
    with pytest.raises(UsageError, match="no tool of the server serves recall"):
        bind([MEM0_LIKE[0]], {}, {})


def test_an_argument_of_the_wrong_type_is_not_bound() -> None:
    tools = [tool("store", required=("content",), content=STR, metadata=STR),
             tool("search", query=STR, nodes=STR, limit={"anyOf": [{"type": "integer"}, {"type": "null"}]})]
    bound = bind(tools, {}, {})
    assert "metadata" not in bound["write"].args and "nodes" not in bound["recall"].args
    assert bound["recall"].args["limit"] == "limit"


ITEM = MemoryItem("t", "agent:a", "turn", "The zircon badge.", role="assistant", thread="th", turn=3, agent="a",
                  at="2026-09-01T09:00:00Z", tool_calls=(ToolCallRef("search", "c1"),), tags=("x",))


def test_an_item_travels_whole_in_its_envelope() -> None:
    record = records_of({"results": [{"id": "srv-1", "content": ITEM.text, "score": 2, **{
        "metadata": item_metadata(ITEM)}}]})[0]
    assert record.id == "srv-1" and record.score == 2.0
    assert item_of("t", record) == ITEM
    assert item_of("t", Record("no envelope")) is None


@pytest.mark.parametrize("answer", [5, {"results": "x"}, {"results": [1]}, {"results": [{"id": 1}]},
                                    {"results": [{"text": "x", "score": float("nan")}]},
                                    {"items": [{"text": "x", "metadata": {"memeval": []}}]}])
def test_malformed_answers_are_refused(answer: Any) -> None:
    with pytest.raises(Malformed):
        records_of(answer)


def test_a_broken_envelope_is_malformed_not_a_default() -> None:
    with pytest.raises(Malformed):
        item_of("t", Record("x", envelope={"node": "agent:a", "kind": "turn", "role": "user", "id": 7}))


def test_answers_read_as_json_ids_cursors_and_counts() -> None:
    assert answer_json(None, ['{"a": 1}']) == {"a": 1}
    assert answer_json({"b": 2}, ["ignored"]) == {"b": 2}
    with pytest.raises(Malformed):
        answer_json(None, ["Stored successfully."])
    assert id_of(None, ["Stored successfully. Event ID: evt_12ab"]) == "evt_12ab"
    assert id_of({"memory_id": 9}, []) == "9" and id_of({}, []) is None
    assert cursor_of({"next_cursor": "c2"}) == "c2" and cursor_of({"next_cursor": None}) is None
    with pytest.raises(Malformed):
        cursor_of({"next_cursor": ["x"]})
    assert count_of({"deleted": {"events": 2}}, []) == 2 and count_of(None, ["Deleted 1 event(s) for x."]) == 1
    with pytest.raises(Malformed):
        count_of({"ok": True}, [])
    with pytest.raises(Malformed):
        count_of(None, ["Done."])
