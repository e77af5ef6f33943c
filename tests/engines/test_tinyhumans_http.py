"""The tinyhumans adapter over real HTTP against the fake CortexDB in hosted mode (a real process)."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator

import pytest

from memeval.engines.base import MemoryItem, RecallRequest
from memeval.engines.tinyhumans import TinyHumansEngine, create
from memeval.errors import EngineError, Unsupported, UsageError
from memeval.run.waits import settle
from memeval.servers.launch import RunningServer, start_server

KEY = "tiny_live_planted-3b7e91c0d5"
FAST = ["--hosted", "--hosted-rate-limit", "0", "--index-delay", "0.05", "--enrich-delay", "0.005"]


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with start_server("fake_cortex", FAST, env={"TINYHUMANS_API_KEY": KEY}) as running:
        yield running


@pytest.fixture
def engine(server: RunningServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[TinyHumansEngine]:
    monkeypatch.setenv("TINYHUMANS_API_KEY", KEY)
    eng = create({"url": server.url, "retry_base_s": 0.01})
    yield eng
    eng.close()
    server.faults(clear=True)


@pytest.fixture
def tenant() -> str:
    return f"eval-{uuid.uuid4().hex[:8]}-office-acme"



def turn(tenant: str, text: str, agent: str = "support", index: int = 0) -> MemoryItem:
    return MemoryItem(tenant, f"agent:{agent}", "turn", text, thread="move", turn=index, agent=agent,
                      at=f"2026-09-01T09:{index:02d}:00Z")


def write_all(engine: TinyHumansEngine, items: list[MemoryItem]) -> None:
    for item in items:
        engine.write(item)
    settle(engine, {items[0].tenant: {i.id for i in items}}, timeout_s=5, poll_s=0.05)


def test_a_missing_key_is_refused_at_creation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TINYHUMANS_API_KEY", raising=False)
    with pytest.raises(UsageError, match="set TINYHUMANS_API_KEY"):
        create({})


def test_round_trip_through_the_envelope(engine: TinyHumansEngine, tenant: str) -> None:
    items = [turn(tenant, f"Step {i}: the parking permit costs 6500 yen.", index=i) for i in range(3)]
    items.append(MemoryItem(tenant, "source:notion", "document", "The office is at 40 Canal Road.", title="Handbook",
                            at="2026-08-30T10:00:00Z"))
    write_all(engine, items)
    assert engine.write(items[0]).replayed is True
    assert engine.list(tenant).items == (items[2], items[1], items[0], items[3])
    assert engine._scopes(tenant, fresh=True) == [  # read back without the org:<id>/ prefix
        f"app:tinymemory/project:{tenant}/agent:support/app:conversations",
        f"app:tinymemory/project:{tenant}/source:notion/app:documents"]
    hits = engine.recall(RecallRequest(tenant, ("agent:", "source:"), "parking permit", 10))
    assert [h.item for h in hits] == items[:3]
    assert "6500 yen" in engine.answer(tenant, "What does the permit cost?", ("agent:support",), 3)
    assert engine.forget(tenant, (items[0].id,)) == 1
    assert items[0] not in engine.list(tenant).items
    engine.erase(tenant)
    assert engine.list(tenant).items == ()


def test_failures_inside_and_outside_the_envelope(engine: TinyHumansEngine, server: RunningServer, tenant: str,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    server.faults(fail=[{"route": "memory/recall", "status": 429, "count": 1, "retry_after": 1}])
    start = time.monotonic()
    assert engine.recall(RecallRequest(tenant, ("learnings",), "anything", 3)) == []
    assert time.monotonic() - start >= 0.9 and "429 rate_limit_error" in caplog.text
    server.faults(fail=[{"route": "memory/recall", "status": 402, "error_code": "USER_INSUFFICIENT_CREDITS"}])
    with pytest.raises(EngineError, match=r"^tinyhumans POST memory/recall: 402 USER_INSUFFICIENT_CREDITS"):
        engine.recall(RecallRequest(tenant, ("learnings",), "anything", 3))
    with pytest.raises(EngineError, match=r"400 BAD_REQUEST") as caught:
        engine.write(MemoryItem(tenant, "learnings", "learning", "x" * (1 << 20 + 1)))
    assert KEY not in str(caught.value) + caplog.text


def test_only_hosted_capabilities_are_declared(engine: TinyHumansEngine, tenant: str) -> None:
    info = engine.info()
    assert info.capabilities == {"forget", "erase", "answer"} and info.server_version is None
    for missing in (engine.usage, engine.backlog, lambda: engine.inspect(tenant), lambda: engine.build_beliefs(tenant)):
        with pytest.raises(Unsupported):
            missing()
