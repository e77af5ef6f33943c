"""``memeval run --jobs N``: scenarios on N threads sharing one engine give the record that
``--jobs 1`` gives (timings and ids aside), really run on several threads, are refused for an
adapter that does not say it is safe across threads, and stop on Ctrl-C as a sequential run does
(exit 130, what finished kept, the rest for ``--resume``: tests/reliability/test_jobs_interrupt.py)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memeval.engines.base import Engine, MemoryItem, RecallRequest
from memeval.engines.reference.engine import create
from memeval.errors import UsageError
from memeval.runner.executor import LocalExecutor, ThreadExecutor, check_executor, make_executor
from memeval.runner.options import RunOptions
from memeval.runner.suite import run_suite
from memeval.spec.load import load_suite
from tests.conftest import ROOT, cli
from tests.reliability.support import normalise

SUITE = f"{ROOT}/specs/agent-memory.yaml"


class ThreadNoting:
    """The reference engine, noting the thread of every call it takes."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self.threads: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._engine, name)
        if not callable(attr):
            return attr

        def noted(*args: Any, **kwargs: Any) -> Any:
            self.threads.add(threading.current_thread().name)
            return attr(*args, **kwargs)
        return noted


def test_jobs_4_records_what_jobs_1_records_and_uses_several_threads() -> None:
    suite = load_suite(SUITE)
    runs = []
    for executor in (LocalExecutor(), ThreadExecutor(4)):
        engine = ThreadNoting(create({}))
        runs.append((run_suite(suite, engine, RunOptions(label="jobs"), executor=executor), engine.threads))
    (one, one_threads), (four, four_threads) = runs
    strip = lambda record: normalise({**record.to_json(), "warm_up_ms": None})  # noqa: E731
    assert strip(four) == strip(one)
    assert len(one.scenarios) == 15 and all(s.status == "ok" for s in four.scenarios)
    assert one_threads == {"MainThread"}
    assert len({t for t in four_threads if t.startswith("memeval-unit")}) >= 2


def test_a_unit_that_raises_stops_the_map_and_the_error_reaches_the_caller() -> None:
    ran: list[int] = []

    def unit(n: int) -> int:
        ran.append(n)
        if n == 3:
            raise RuntimeError("unit 3 broke")
        return n

    with pytest.raises(RuntimeError, match="unit 3 broke"):
        dict(ThreadExecutor(2).map(unit, ((str(n), n) for n in range(100))))
    assert len(ran) < 100  # the units not started were dropped


def test_units_are_taken_as_threads_free_up_not_all_at_once() -> None:
    taken: list[int] = []

    def units() -> Iterator[tuple[str, int]]:
        for n in range(50):
            taken.append(n)
            yield str(n), n

    results = ThreadExecutor(3).map(lambda n: n * 2, units())
    first = next(results)
    assert len(taken) <= 4  # three running, at most one more taken while the first was yielded
    assert sorted([first, *results]) == sorted((str(n), n * 2) for n in range(50))


@pytest.mark.parametrize(("executor", "jobs", "message"), [
    ("local", 0, "use 1 to 64"), ("local", 65, "use 1 to 64"),
    ("dask", 2, "with --executor dask the workers run them"),
])
def test_jobs_out_of_range_or_with_dask_is_refused(executor: str, jobs: int, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        check_executor(executor, jobs=jobs)
    assert isinstance(make_executor("local", jobs=3), ThreadExecutor)
    assert isinstance(make_executor("local", jobs=1), LocalExecutor)


def test_an_adapter_not_safe_across_threads_is_refused_before_anything_starts(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert cli(["run", SUITE, "--engine", "mem0", "--jobs", "2", "--out", str(out)]) == 2
    assert "the mem0 adapter does not say its engine is safe across threads" in capsys.readouterr().err
    assert not out.exists()  # refused before a folder, a journal or the mock server


def test_the_reference_engine_answers_recalls_from_many_threads_as_from_one() -> None:
    engine = create({"embedder": "none"})
    engine.write_many([MemoryItem("t", f"agent:a{i % 3}", "turn", f"note {i} about topic {i % 7}") for i in range(300)])
    asks = [RecallRequest("t", (f"agent:a{i % 3}",), f"topic {i % 7}", 5) for i in range(60)]
    alone = [[h.item.id for h in engine.recall(ask)] for ask in asks]
    together = list(ThreadExecutor(8).map(lambda ask: [h.item.id for h in engine.recall(ask)],
                                          ((str(i), ask) for i, ask in enumerate(asks))))
    assert dict(together) == {str(i): ids for i, ids in enumerate(alone)}
