"""The mem0 adapter against the engine contract, end to end: mem0ai's Memory in this process,
qdrant on disk, and the mock inference server as a real process on 127.0.0.1 answering its
embedding and extraction calls. Skipped when mem0ai is not installed (``pip install
'memeval-harness[mem0]'``); the mock's extraction answer itself is tested without mem0."""

from __future__ import annotations

import importlib.util
import json
import uuid
from collections.abc import Iterator

import pytest

from memeval.engines import create_engine

from memeval.engines.mem0 import adapter as mem0
from memeval.engines.mem0 import records
from memeval.engines.base import Engine, MemoryItem, RecallRequest
from memeval.errors import EngineError, UsageError
from memeval.servers.launch import RunningServer
from memeval.servers.mock_inference.models import object_reply
from tests.engines.conftest import assert_engine_leaves_nothing
from tests.engines.mockserve import assert_memeval_run_leaves_nothing, chat_calls, recall, turn

needs_mem0 = pytest.mark.skipif(importlib.util.find_spec("mem0") is None,
                                reason="mem0ai is not installed (pip install 'memeval-harness[mem0]')")


@pytest.fixture(scope="module")
def extracting(mock: RunningServer) -> Iterator[Engine]:
    """mem0 with LLM extraction (``infer`` true) against the mock."""
    engine = create_engine("mem0", {"url": mock.url + "/v1"})
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def raw(mock: RunningServer) -> Iterator[Engine]:
    """mem0 storing messages as they are (``infer`` false)."""
    engine = create_engine("mem0", {"url": mock.url + "/v1", "infer": False})
    yield engine
    engine.close()


@pytest.fixture
def tenant() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


def test_mock_extraction_copies_each_new_message_line():
    prompt = ("## Existing Memories\n[]\n\n## New Messages\nuser: I moved to Berlin.\nI like tea.\n\n"
              "assistant: Noted.\n\n## Observation Date\n2026-09-01")
    messages = [{"role": "system", "content": "extract"}, {"role": "user", "content": prompt}]
    assert object_reply(messages) == {"memory": [{"text": "I moved to Berlin."}, {"text": "I like tea."},
                                                 {"text": "Noted."}]}
    assert object_reply([{"role": "user", "content": "no sections here"}]) == {}


def test_a_malformed_mem0_answer_is_an_engine_error_not_an_empty_item_or_a_score():
    item = MemoryItem("t", "agent:a", "turn", "I moved to Berlin.")
    good = {"memory": item.text, "metadata": records.metadata(item, 1), "score": 0.5}
    assert records.item_of(good) == item
    for broken in ({k: v for k, v in good.items() if k != "memory"},
                   {**good, "metadata": {**good["metadata"], records.ITEM: "{not json"}}):
        with pytest.raises(EngineError, match="cannot read back"):
            records.item_of(broken)

    class Answers:
        def search(self, *args, **kwargs):
            return {"results": [{**good, "score": float("nan")}]}

    conf = {"infer": False, "threshold": 0.1, "url": "u", "llm_model": "m", "embed_model": "e", "embed_dims": 8}
    engine = mem0.Mem0Engine(Answers(), conf, "/nonexistent", False)
    with pytest.raises(EngineError, match="not a finite number"):
        engine.recall(RecallRequest("t", ("agent:",), "Berlin", 3))


@needs_mem0
def test_settings_are_validated(monkeypatch):
    monkeypatch.delenv("MEM0_OPENAI_URL", raising=False)
    monkeypatch.delenv("MEMEVAL_TEST_UNSET_KEY", raising=False)
    for settings in ({}, {"url": "http://127.0.0.1:1/v1", "infer": "yes"}, {"url": "http://x/v1", "colour": 1},
                     {"url": "http://x/v1", "threshold": 2}, {"url": "http://x/v1", "embed_dims": 0},
                     {"url": "http://x/v1", "api_key_env": "MEMEVAL_TEST_UNSET_KEY"}):
        with pytest.raises(UsageError):
            create_engine("mem0", settings)


@pytest.mark.parametrize("infer, caps", [(True, {"forget", "erase", "inspect"}), (False, {"forget", "erase"})])
@pytest.mark.slow
@needs_mem0
def test_capabilities_are_what_the_adapter_implements(request, infer, caps):
    engine = request.getfixturevalue("extracting" if infer else "raw")
    info = engine.info()
    assert info.name == "mem0" and info.version.startswith("2.")
    assert info.capabilities == frozenset(caps)
    assert info.settings["infer"] is infer and "api_key" not in json.dumps(info.to_json())
    for missing in ("answer", "build_beliefs", "usage", "backlog") + (() if infer else ("inspect",)):
        assert not hasattr(engine, missing)


@pytest.mark.slow
@needs_mem0
def test_extraction_goes_through_one_chat_call_and_is_what_inspect_shows(extracting, mock, tenant):
    before = chat_calls(mock)
    item = turn(tenant, "I moved to Berlin.\nMy manager is Lucas.", title="intro", tags=("x",))
    extracting.write(item)
    assert chat_calls(mock) == before + 1
    facts = [f.object for f in extracting.inspect(tenant).facts]
    assert sorted(facts) == ["I moved to Berlin.", "My manager is Lucas."]
    hit = recall(extracting, tenant, "where did I move, Berlin?", limit=1)[0]
    assert hit.item.text == "I moved to Berlin." and hit.item.id == item.id
    assert (hit.item.thread, hit.item.turn, hit.item.title, hit.item.tags) == ("t1", 0, "intro", ("x",))
    assert extracting.page(tenant).items == (item,)


@pytest.mark.slow
@needs_mem0
def test_a_replayed_write_stores_nothing(extracting, mock, tenant):
    item = turn(tenant, "Bob prefers tea over coffee")
    assert not extracting.write(item).replayed
    calls = chat_calls(mock)
    assert extracting.write(item).replayed
    assert chat_calls(mock) == calls
    assert len(extracting.inspect(tenant).facts) == 1


@pytest.mark.slow
@needs_mem0
def test_tenants_never_see_each_other(raw, tenant):
    other = tenant + "-other"
    raw.write(turn(tenant, "Alice moved to Berlin"))
    raw.write(turn(other, "Alice moved to Paris"))
    assert [h.item.text for h in recall(raw, tenant, "Alice moved")] == ["Alice moved to Berlin"]
    assert [i.text for i in raw.page(other).items] == ["Alice moved to Paris"]


@pytest.mark.slow
@needs_mem0
def test_limit_is_really_honoured_past_twenty(raw, tenant):
    for i in range(160):
        raw.write(turn(tenant, f"release note {i} about the release train", i=i))
    assert len(recall(raw, tenant, "release train", limit=150)) == 150
    assert len(recall(raw, tenant, "release train", limit=3)) == 3
    assert len(recall(raw, tenant, None, limit=150)) == 150


@pytest.mark.slow
@needs_mem0
def test_node_filters_by_exact_name_prefix_or_both(raw, tenant):
    raw.write(turn(tenant, "deploy notes from agent a", "agent:a"))
    raw.write(turn(tenant, "deploy notes from agent b", "agent:b"))
    raw.write(MemoryItem(tenant, "source:handbook", "document", "deploy handbook", title="Handbook"))
    nodes = lambda patterns: {h.item.node for h in recall(raw, tenant, "deploy notes", patterns)}  # noqa: E731
    assert nodes(("agent:",)) == {"agent:a", "agent:b"}
    assert nodes(("agent:b",)) == {"agent:b"}
    assert nodes(("source:", "agent:a")) == {"source:handbook", "agent:a"}
    assert nodes(("learnings",)) == set()
    assert [h.item.node for h in recall(raw, tenant, None, ("source:handbook",))] == ["source:handbook"]


@pytest.mark.slow
@needs_mem0
def test_page_is_newest_first_each_item_once(raw, tenant):
    items = [turn(tenant, f"entry {i}", i=i) for i in range(5)]
    for item in reversed(items):
        raw.write(item)
    first = raw.page(tenant, None, 2)
    rest = raw.page(tenant, first.cursor, 10)
    assert [i.text for i in first.items + rest.items] == [f"entry {i}" for i in range(4, -1, -1)]
    assert rest.cursor is None
    with pytest.raises(EngineError):
        raw.page(tenant, "nonsense")


@pytest.mark.slow
@needs_mem0
def test_forget_and_erase_remove_from_recall_listing_and_inspect(extracting, tenant):
    keep, gone = turn(tenant, "tea is kept", i=0), turn(tenant, "tea is forgotten\ntea twice", i=1)
    extracting.write(keep)
    extracting.write(gone)
    assert extracting.forget(tenant, (gone.id, "unknown-id")) == 1
    assert {h.item.id for h in recall(extracting, tenant, "tea")} == {keep.id}
    assert [i.id for i in extracting.page(tenant).items] == [keep.id]
    assert [f.object for f in extracting.inspect(tenant).facts] == ["tea is kept"]
    extracting.erase(tenant)
    assert extracting.page(tenant).items == () and recall(extracting, tenant, "tea") == []
    assert extracting.inspect(tenant).facts == ()


@pytest.mark.slow
@needs_mem0
def test_a_failing_model_is_a_one_line_engine_error_and_the_write_can_be_retried(extracting, mock, tenant):
    item = turn(tenant, "I am allergic to peanuts")
    mock.faults(fail=[{"status": 400, "count": 1, "route": "chat"}])
    with pytest.raises(EngineError) as err:
        extracting.write(item)
    assert "\n" not in str(err.value) and str(err.value).startswith("mem0 add failed")
    assert extracting.page(tenant).items == ()
    assert not extracting.write(item).replayed
    assert [i.id for i in extracting.page(tenant).items] == [item.id]


@pytest.mark.slow
@needs_mem0
def test_nothing_is_written_to_home_and_the_owned_folder_goes_on_close(mock, tmp_path):
    assert_engine_leaves_nothing(tmp_path, "mem0", mock.url + "/v1", "I like tea", "tea", "MEM0_DIR")


@pytest.mark.slow
@needs_mem0
def test_memeval_run_with_engines_mem0_yaml_starts_the_mock_and_leaves_nothing_behind(tmp_path):
    assert_memeval_run_leaves_nothing(tmp_path, "mem0", ("MEM0_OPENAI_URL", "MEM0_DIR"))
