"""The enrichment drain against the fake CortexDB as a process: an empty queue ends the wait at
the first reading (issue 16: four quiet polls of 3 s cost every scenario 9 s), a busy one is
polled at growing intervals until it empties."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from memeval.engines.cortex.adapter import CortexEngine
from memeval.runner.waits import drain
from memeval.servers.launch import RunningServer
from tests.engines.conftest import CORTEX_KEY, connect, fake_cortex, turn

pytestmark = pytest.mark.slow  # every test talks to the fake CortexDB as a process


@pytest.fixture(scope="module")
def slow_enrichment() -> Iterator[RunningServer]:
    yield from fake_cortex(["--enrich-delay", "0.1"], {"CORTEX_API_KEY": CORTEX_KEY})


@pytest.fixture
def engine(slow_enrichment: RunningServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[CortexEngine]:
    eng = connect(slow_enrichment, monkeypatch)
    yield eng
    eng.close()


def queue(engine: CortexEngine, tenant: str, jobs: int) -> None:
    """Write ``jobs`` turns, each one enrichment job for the fake's 0.1 s worker."""
    for n in range(jobs):
        engine.write(turn(tenant, f"Ticket {n}: the printer on floor {n} is jammed.", index=n))


def test_an_empty_queue_is_drained_at_the_first_reading(engine: CortexEngine) -> None:
    assert engine.backlog() == 0
    slept: list[float] = []
    assert drain(engine, cap_s=30, poll_s=3, sleep=slept.append) == {"drained": True, "polls": 1, "pending": 0}
    assert slept == []


def test_a_busy_queue_is_polled_sooner_first_then_up_to_the_poll_interval(engine: CortexEngine, tenant: str) -> None:
    queue(engine, tenant, 8)
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        time.sleep(seconds)

    result = drain(engine, cap_s=30, poll_s=0.4, sleep=sleep)
    assert result["drained"] is True and result["pending"] == 0 and result["polls"] == len(slept) + 1
    assert slept[:3] == [0.05, 0.1, 0.2] and set(slept[3:]) <= {0.4}
    assert engine.backlog() == 0


def test_a_queue_that_never_empties_is_reported_undrained_at_the_cap(engine: CortexEngine, tenant: str) -> None:
    queue(engine, tenant, 30)
    result = drain(engine, cap_s=0.3, poll_s=0.1, sleep=time.sleep)
    assert result["drained"] is False and isinstance(result["pending"], int) and result["pending"] > 0
