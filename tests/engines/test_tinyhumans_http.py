"""The tinyhumans adapter over real HTTP against the fake CortexDB in hosted mode (a real process)."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from memeval.engines.base import (BuildsBeliefs, HasBacklog, Inspects, MemoryItem, RecallRequest, ReportsConflicts,
                                  ReportsUsage)
from memeval.engines.cortex.layout import ShapeError
from memeval.engines.cortex.tinyhumans import TinyHumansEngine, create
from memeval.errors import EngineError, UsageError
from memeval.servers.launch import RunningServer
from tests.engines.conftest import HOSTED_KEY, QUICK, turn, write_all


@pytest.fixture
def engine(hosted: RunningServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[TinyHumansEngine]:
    monkeypatch.setenv("TINYHUMANS_API_KEY", HOSTED_KEY)
    eng = create({"url": hosted.url, **QUICK})
    yield eng
    eng.close()
    hosted.faults(clear=True)


def test_a_missing_key_is_refused_at_creation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TINYHUMANS_API_KEY", raising=False)
    with pytest.raises(UsageError, match="set TINYHUMANS_API_KEY"):
        create({})


@pytest.mark.slow


def test_round_trip_through_the_envelope(engine: TinyHumansEngine, tenant: str) -> None:
    items = [turn(tenant, f"Step {i}: the parking permit costs 6500 yen.", index=i) for i in range(3)]
    items.append(MemoryItem(tenant, "source:notion", "document", "The office is at 40 Canal Road.", title="Handbook",
                            at="2026-08-30T10:00:00Z"))
    write_all(engine, items)
    assert engine.write(items[0]).replayed is True
    assert engine.page(tenant).items == (items[2], items[1], items[0], items[3])
    assert engine._scopes(tenant, fresh=True) == [  # read back without the org:<id>/ prefix
        f"app:tinymemory/project:{tenant}/agent:support/app:conversations",
        f"app:tinymemory/project:{tenant}/source:notion/app:documents"]
    hits = engine.recall(RecallRequest(tenant, ("agent:", "source:"), "parking permit", 10))
    assert [h.item for h in hits] == items[:3]
    assert "6500 yen" in engine.answer(tenant, "What does the permit cost?", ("agent:support",), 3)
    assert engine.forget(tenant, (items[0].id,)) == 1
    assert items[0] not in engine.page(tenant).items
    engine.erase(tenant)
    assert engine.page(tenant).items == ()


@pytest.mark.slow


def test_failures_inside_and_outside_the_envelope(engine: TinyHumansEngine, hosted: RunningServer, tenant: str,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    hosted.faults(fail=[{"route": "memory/recall", "status": 429, "count": 1, "retry_after": 1}])
    start = time.monotonic()
    assert engine.recall(RecallRequest(tenant, ("learnings",), "anything", 3)) == []
    assert time.monotonic() - start >= 0.9 and "429 rate_limit_error" in caplog.text
    hosted.faults(fail=[{"route": "memory/recall", "status": 402, "error_code": "USER_INSUFFICIENT_CREDITS"}])
    with pytest.raises(EngineError, match=r"^tinyhumans POST memory/recall: 402 USER_INSUFFICIENT_CREDITS"):
        engine.recall(RecallRequest(tenant, ("learnings",), "anything", 3))
    with pytest.raises(EngineError, match=r"400 BAD_REQUEST") as caught:
        engine.write(MemoryItem(tenant, "learnings", "learning", "x" * (1 << 20 + 1)))
    assert HOSTED_KEY not in str(caught.value) + caplog.text


@pytest.mark.slow


def test_only_hosted_capabilities_are_declared(engine: TinyHumansEngine, tenant: str) -> None:
    info = engine.info()
    assert info.to_json()["capabilities"] == ["answer", "erase", "forget"] and info.server_version is None
    for missing in (ReportsUsage, HasBacklog, Inspects, BuildsBeliefs, ReportsConflicts):
        assert not isinstance(engine, missing)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["truncated", "html", "shape"])
def test_an_unreadable_hosted_answer_is_an_engine_error(engine: TinyHumansEngine, hosted: RunningServer, tenant: str,
                                                        mode: str) -> None:
    write_all(engine, [turn(tenant, "The parking permit costs 6500 yen.")])
    hosted.faults(garble=[{"route": "memory/events", "mode": mode, "count": 1000}])
    with pytest.raises(EngineError, match=r"^tinyhumans GET memory/events: "):
        engine.page(tenant)


def test_a_scope_listing_entry_without_a_path_is_a_shape_error_not_the_scope_none() -> None:
    def fake(body: object) -> SimpleNamespace:
        return SimpleNamespace(name="tinyhumans", _call_unless=lambda *a, **k: body)

    assert TinyHumansEngine._listed_scopes(fake({"scopes": [{"path": "p"}, "q"]}), "t") == ["p", "q"]  # type: ignore[arg-type]
    for scopes in ([{"name": "p"}], [None], [{"path": ""}]):
        with pytest.raises(ShapeError, match="a scope without a path"):
            TinyHumansEngine._listed_scopes(fake({"scopes": scopes}), "t")  # type: ignore[arg-type]
