"""What an engine does once per run (loading an embedding model, opening a connection) is timed
as the run's warm-up, shown under its own label, and kept out of the probe and pre_turn latency
KPIs: a 2.5 s model load once read as a probe's max latency."""

from __future__ import annotations

import time

from memeval.engines.base import Hit, RecallRequest
from memeval.errors import EngineError
from memeval.record import TimingLabel
from memeval.runner.options import RunOptions
from memeval.runner.suite import run_suite
from memeval.spec.engine_def import resolve_engine
from memeval.spec.load import load_suite
from tests.conftest import FIXTURES

LOAD_S = 0.3


class SlowFirstRecall:
    """The reference engine, whose first recall pays a one-time load as a lazy model would."""

    def __init__(self) -> None:
        self.inner = resolve_engine("reference-bm25").create()
        self.loaded = False

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def recall(self, request: RecallRequest) -> list[Hit]:
        if not self.loaded:
            time.sleep(LOAD_S)
            self.loaded = True
        return self.inner.recall(request)


def test_the_one_time_load_is_warm_up_not_probe_latency() -> None:
    engine = SlowFirstRecall()
    record = run_suite(load_suite(f"{FIXTURES}/mini.yaml"), engine, RunOptions())  # type: ignore[arg-type]
    warm = record.timings[TimingLabel.WARMUP]
    assert len(warm) == 1 and warm[0] >= 1000 * LOAD_S
    timed = [v for label, vs in record.timings.items() if label is not TimingLabel.WARMUP for v in vs]
    assert timed and max(timed) < 1000 * LOAD_S
    latency = {k.name: k for k in record.kpis if k.group == "latency"}
    assert latency["probe p50"].n == sum(len(vs) for label, vs in record.timings.items() if label.is_probe)
    assert record.latency[TimingLabel.WARMUP].max == warm[0]
    assert not engine.inner.page(f"{record.run_id}-warm-up").items  # the warm-up leaves nothing behind


class FailingFirstRecall(SlowFirstRecall):
    """The reference engine whose first recall fails (a server that is not ready yet)."""

    def recall(self, request: RecallRequest) -> list[Hit]:
        if not self.loaded:
            self.loaded = True
            raise EngineError("recall: 503 not ready")
        return self.inner.recall(request)


def test_a_failed_warm_up_recall_still_forgets_the_write() -> None:
    engine = FailingFirstRecall()
    record = run_suite(load_suite(f"{FIXTURES}/mini.yaml"), engine, RunOptions())  # type: ignore[arg-type]
    assert TimingLabel.WARMUP not in record.timings
    assert not engine.inner.page(f"{record.run_id}-warm-up").items
