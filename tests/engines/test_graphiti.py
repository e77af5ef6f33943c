"""The Graphiti adapter against the engine contract, end to end: graphiti-core on its embedded
Kuzu driver in this process, and the mock inference server as a real process on 127.0.0.1
answering its json_schema extraction calls (capitalised words become entities, the sentence
the fact). Skipped when graphiti-core is not installed (``pip install 'memeval-harness[graphiti]'``);
the mock's schema answers themselves are tested in tests/servers/test_mock_schema.py."""

from __future__ import annotations

import importlib.util
import json
import uuid
from collections.abc import Iterator

import pytest

from memeval.engines import create_engine
from memeval.engines.base import Engine, MemoryItem
from memeval.errors import EngineError, UsageError
from memeval.servers.launch import RunningServer
from tests.engines.conftest import assert_engine_leaves_nothing
from tests.engines.mockserve import assert_memeval_run_leaves_nothing, chat_calls, recall, turn

needs_graphiti = pytest.mark.skipif(importlib.util.find_spec("graphiti_core") is None,
                                    reason="graphiti-core is not installed (pip install 'memeval-harness[graphiti]')")
pytestmark = [pytest.mark.slow, needs_graphiti,
              pytest.mark.filterwarnings("ignore:The Kuzu backend is deprecated:DeprecationWarning")]


@pytest.fixture(scope="module")
def engine(mock: RunningServer) -> Iterator[Engine]:
    made = create_engine("graphiti", {"url": mock.url + "/v1"})
    yield made
    made.close()


@pytest.fixture
def tenant() -> str:
    return f"tenant {uuid.uuid4().hex[:8]}"  # a space: not a valid Graphiti group id as it is


def test_settings_are_validated(monkeypatch):
    monkeypatch.delenv("GRAPHITI_OPENAI_URL", raising=False)
    monkeypatch.delenv("MEMEVAL_TEST_UNSET_KEY", raising=False)
    for settings in ({}, {"url": "http://x/v1", "colour": 1}, {"url": "http://x/v1", "embed_dims": 0},
                     {"url": "http://x/v1", "api_key_env": "MEMEVAL_TEST_UNSET_KEY"}):
        with pytest.raises(UsageError):
            create_engine("graphiti", settings)


def test_capabilities_are_what_the_adapter_implements(engine):
    info = engine.info()
    assert info.name == "graphiti" and info.version.startswith("0.31")
    assert info.capabilities == frozenset({"forget", "erase", "inspect"})
    assert "api_key" not in json.dumps(info.to_json())
    for missing in ("answer", "build_beliefs", "usage", "backlog"):
        assert not hasattr(engine, missing)


def test_a_turn_becomes_entities_and_a_fact_edge_that_recall_finds(engine, mock, tenant):
    before = chat_calls(mock)
    item = turn(tenant, "Alice moved to Paris.")
    assert not engine.write(item).replayed
    assert chat_calls(mock) > before  # extraction went through the model
    assert [(f.subject, f.object) for f in engine.inspect(tenant).facts] == [("Alice", "Paris")]
    hits = recall(engine, tenant, "Where did Alice move? Paris")
    assert [h.item for h in hits] == [item]
    assert engine.page(tenant).items == (item,)


def test_a_replayed_write_stores_nothing(engine, mock, tenant):
    item = turn(tenant, "Bob prefers Earl Grey")
    engine.write(item)
    calls = chat_calls(mock)
    assert engine.write(item).replayed
    assert chat_calls(mock) == calls
    assert len(engine.inspect(tenant).facts) == 1


def test_tenants_never_see_each_other(engine, tenant):
    other = tenant + "-other"
    engine.write(turn(tenant, "Alice moved to Berlin"))
    engine.write(turn(other, "Alice moved to Paris"))
    assert [h.item.text for h in recall(engine, tenant, "Alice moved")] == ["Alice moved to Berlin"]
    assert [f.object for f in engine.inspect(other).facts] == ["Paris"]


def test_limit_is_honoured_in_items_not_edges(engine, tenant):
    for i in range(6):
        engine.write(turn(tenant, f"Release Train {i} left Station Alpha{i} for Station Beta{i}", i=i))
    assert len(recall(engine, tenant, "Release Train Station", limit=4)) == 4
    assert len(recall(engine, tenant, "Release Train Station", limit=1)) == 1
    assert len(recall(engine, tenant, None, limit=5)) == 5


def test_node_filters_by_exact_name_or_prefix(engine, tenant):
    engine.write(turn(tenant, "Deploy Notes by Agent Ann", "agent:a"))
    engine.write(turn(tenant, "Deploy Notes by Agent Ben", "agent:b"))
    engine.write(MemoryItem(tenant, "source:handbook", "document", "Deploy Handbook by Ops Team", title="Handbook"))
    nodes = lambda patterns: {h.item.node for h in recall(engine, tenant, "Deploy Notes", patterns)}  # noqa: E731
    assert nodes(("agent:",)) == {"agent:a", "agent:b"}
    assert nodes(("agent:b",)) == {"agent:b"}
    assert nodes(("learnings",)) == set()
    assert [h.item.node for h in recall(engine, tenant, None, ("source:handbook",))] == ["source:handbook"]


def test_forget_and_erase_remove_from_recall_listing_and_inspect(engine, tenant):
    keep, gone = turn(tenant, "Carol drinks Assam", i=0), turn(tenant, "Dave drinks Oolong", i=1)
    engine.write(keep)
    engine.write(gone)
    assert engine.forget(tenant, (gone.id, "unknown-id")) == 1
    assert {h.item.id for h in recall(engine, tenant, "who drinks Oolong or Assam")} == {keep.id}
    assert [i.id for i in engine.page(tenant).items] == [keep.id]
    assert [(f.subject, f.object) for f in engine.inspect(tenant).facts] == [("Carol", "Assam")]
    engine.erase(tenant)
    assert engine.page(tenant).items == () and recall(engine, tenant, "Carol Assam") == []
    assert engine.inspect(tenant).facts == ()


def test_a_failing_model_is_a_one_line_engine_error_and_the_write_can_be_retried(engine, mock, tenant):
    item = turn(tenant, "Erin is allergic to Peanuts")
    mock.faults(fail=[{"status": 400, "count": 1, "route": "chat"}])
    with pytest.raises(EngineError) as err:
        engine.write(item)
    assert "\n" not in str(err.value) and str(err.value).startswith("graphiti add_episode failed")
    assert engine.page(tenant).items == ()
    assert not engine.write(item).replayed
    assert [i.id for i in engine.page(tenant).items] == [item.id]


def test_nothing_is_written_to_home_and_the_owned_folder_goes_on_close(mock, tmp_path):
    assert_engine_leaves_nothing(tmp_path, "graphiti", mock.url + "/v1", "Fay likes Darjeeling", "Darjeeling",
                                 "GRAPHITI_TELEMETRY_ENABLED")


def test_memeval_run_with_engines_graphiti_yaml_starts_the_mock_and_leaves_nothing_behind(tmp_path):
    assert_memeval_run_leaves_nothing(tmp_path, "graphiti", ("GRAPHITI_OPENAI_URL",))
