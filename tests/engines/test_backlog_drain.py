"""The enrichment drain against the fake CortexDB as a process: an empty queue ends the wait at
the first reading (issue 16: four quiet polls of 3 s cost every scenario 9 s), a busy one is
polled at growing intervals until it empties."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from memeval.engines.cortex import CortexEngine, create
from memeval.run.waits import drain
from memeval.servers.launch import RunningServer
from tests.engines.conftest import CORTEX_KEY, QUICK, fake_cortex, turn


@pytest.fixture(scope="module")
def slow_enrichment() -> Iterator[RunningServer]:
    yield from fake_cortex(["--enrich-delay", "0.1"], {"CORTEX_API_KEY": CORTEX_KEY})


def connect(server: RunningServer, monkeypatch: pytest.MonkeyPatch) -> CortexEngine:
    monkeypatch.setenv("CORTEX_DB_KEY", CORTEX_KEY)
    return create({"url": server.url, **QUICK})


def test_an_empty_queue_is_drained_at_the_first_reading(slow_enrichment: RunningServer,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    engine = connect(slow_enrichment, monkeypatch)
    assert engine.backlog() == 0
    slept: list[float] = []
    assert drain(engine, cap_s=30, poll_s=3, sleep=slept.append) == {"drained": True, "polls": 1, "pending": 0}
    assert slept == []
    engine.close()


def test_a_busy_queue_is_polled_sooner_first_then_up_to_the_poll_interval(slow_enrichment: RunningServer,
                                                                          monkeypatch: pytest.MonkeyPatch,
                                                                          tenant: str) -> None:
    engine = connect(slow_enrichment, monkeypatch)
    for n in range(8):
        engine.write(turn(tenant, f"Ticket {n}: the printer on floor {n} is jammed.", index=n))
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        time.sleep(seconds)

    result = drain(engine, cap_s=30, poll_s=0.4, sleep=sleep)
    assert result["drained"] is True and result["pending"] == 0 and result["polls"] == len(slept) + 1
    assert slept[:3] == [0.05, 0.1, 0.2] and set(slept[3:]) <= {0.4}
    assert engine.backlog() == 0
    engine.close()


def test_a_queue_that_never_empties_is_reported_undrained_at_the_cap(slow_enrichment: RunningServer,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     tenant: str) -> None:
    engine = connect(slow_enrichment, monkeypatch)
    for n in range(30):
        engine.write(turn(tenant, f"Backlog line {n} about the quarterly audit.", index=n))
    result = drain(engine, cap_s=0.3, poll_s=0.1, sleep=time.sleep)
    assert result["drained"] is False and isinstance(result["pending"], int) and result["pending"] > 0
    engine.close()
