"""Where independent units (a suite's scenarios, a sweep's cells) run: here, one after another
(the default), here on several threads (``--jobs N``: for an engine whose calls mostly wait on a
network, a remote server or a hosted API), or on a Dask cluster (``--executor dask``, the
``memeval-harness[dask]`` extra).

Either way the caller is the one writer: an executor only hands back each unit's result (typed,
picklable values), and the caller writes the folder, the journal and the summary. On Dask each
unit is submitted once under its own key with ``retries=1`` (a worker lost mid-unit: the unit
runs again elsewhere), and only the first complete result per unit id is yielded, so no unit is
counted twice. Dask is imported only when asked for.
"""

from __future__ import annotations

import importlib
import os
import secrets
import socket
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from memeval.engines.cancel import GRACE_S, cancel_requests
from memeval.errors import UsageError
from memeval.util.interruptible import completed, deferred_interrupts

U = TypeVar("U")
R = TypeVar("R")

EXECUTORS = ("local", "dask")
MAX_JOBS = 64
"""The most threads ``--jobs`` runs units on."""


@dataclass(frozen=True)
class Timed(Generic[R]):
    """A unit's result with the process it ran in and when it started and ended there (epoch s)."""

    result: R
    worker: str
    started: float
    ended: float


@dataclass(frozen=True)
class UnitTiming:
    """When a unit was submitted, ran and came back (epoch seconds; one clock on one machine)."""

    key: str
    worker: str
    """``host:pid`` of the process that ran it."""
    submitted: float
    started: float
    ended: float
    received: float
    """When the driver held its result."""


class Executor(Protocol):
    """Runs units and yields ``(key, result)`` as each finishes; ``remote`` executors run them
    in other processes, so a unit must build what it needs (its engine) from values."""

    remote: bool
    timings: list[UnitTiming]

    def map(self, fn: Callable[[U], R], units: Iterable[tuple[str, U]]) -> Iterator[tuple[str, R]]:
        """Run ``fn`` on every unit; yield each key once with its result."""
        ...

    def close(self) -> None:
        """Release what the executor started (a local cluster)."""
        ...


class LocalExecutor:
    """In this process, in the order given (today's behaviour); an exception or Ctrl-C
    propagates from the unit that raised it."""

    remote = False

    def __init__(self) -> None:
        self.timings: list[UnitTiming] = []

    def map(self, fn: Callable[[U], R], units: Iterable[tuple[str, U]]) -> Iterator[tuple[str, R]]:
        for key, unit in units:
            yield key, fn(unit)

    def close(self) -> None:
        pass


class ThreadExecutor:
    """In this process on ``jobs`` threads sharing one engine (whose adapter says it is safe
    across threads); units are taken from the iterable as threads free up (at most ``jobs``
    ahead), and each result is yielded as it finishes, to the one caller that writes.

    A unit that raises stops the map: the units not started are dropped, and the exception
    propagates once the running ones end. A Ctrl-C (or SIGTERM) cancels the engine requests in
    flight (:func:`memeval.engines.cancel.cancel_requests`), drops the units not started, waits
    at most the cancellation's grace for the running ones, and raises KeyboardInterrupt; what
    those finished meanwhile is in the journal for ``--resume``, not in the interrupted record.
    """

    remote = False

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.timings: list[UnitTiming] = []

    def map(self, fn: Callable[[U], R], units: Iterable[tuple[str, U]]) -> Iterator[tuple[str, R]]:
        pool = ThreadPoolExecutor(self.jobs, thread_name_prefix="memeval-unit")
        pending = iter(units)
        running: dict[Future[Timed[R]], tuple[str, float]] = {}
        try:
            with deferred_interrupts():
                self._fill(pool, fn, pending, running)
                while running:
                    for future in completed(list(running)):
                        key, at = running.pop(future)
                        timed = future.result()
                        self.timings.append(UnitTiming(key, timed.worker, at, timed.started, timed.ended, time.time()))
                        yield key, timed.result
                        self._fill(pool, fn, pending, running)
                        break  # wait again over the refilled set
        except KeyboardInterrupt:
            cancel_requests()
            wait(list(running), timeout=GRACE_S + 1.0)
            raise
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    def _fill(self, pool: ThreadPoolExecutor, fn: Callable[[U], R], pending: Iterator[tuple[str, U]],
              running: dict[Future[Timed[R]], tuple[str, float]]) -> None:
        """Submit units until ``jobs`` run or none is left."""
        while len(running) < self.jobs:
            nxt = next(pending, None)
            if nxt is None:
                return
            key, unit = nxt
            running[pool.submit(run_timed, fn, unit)] = (key, time.time())

    def close(self) -> None:
        pass


def run_timed(fn: Callable[[U], R], unit: U) -> Timed[R]:
    """``fn(unit)`` with its start and end time (runs on the worker)."""
    started = time.time()
    result = fn(unit)
    return Timed(result, f"{socket.gethostname()}:{os.getpid()}", started, time.time())


class DaskExecutor:
    """On a Dask cluster: the one at ``scheduler`` (``tcp://host:8786``), else a new
    ``LocalCluster`` of ``workers`` processes with one thread each."""

    remote = True

    def __init__(self, scheduler: str | None = None, workers: int = 2):
        try:
            self._dask: Any = importlib.import_module("distributed")  # typed loosely: distributed has no stubs
        except ImportError:
            raise UsageError("--executor dask needs dask and distributed: pip install 'memeval-harness[dask]'") from None
        self.timings: list[UnitTiming] = []
        self._client: Any = None
        self._cluster: Any = None
        if scheduler is None:
            self._cluster = self._dask.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                    dashboard_address=None)
        try:
            self._client = self._dask.Client(scheduler or self._cluster)
        except OSError as err:
            self.close()
            raise UsageError(f"--scheduler {scheduler}: cannot reach the Dask scheduler: {err}") from None

    def map(self, fn: Callable[[U], R], units: Iterable[tuple[str, U]]) -> Iterator[tuple[str, R]]:
        run = secrets.token_hex(4)  # a fresh key per submission: Dask must never reuse an earlier result
        submitted: dict[Any, tuple[str, float]] = {}
        for key, unit in units:
            future = self._client.submit(run_timed, fn, unit, key=f"memeval-{run}-{key}", pure=False, retries=1)
            submitted[future] = (key, time.time())
        try:  # each future completes once (a retried unit is the same future), so each key comes back once
            for future in self._dask.as_completed(list(submitted)):
                key, at = submitted[future]
                timed: Timed[R] = future.result()
                self.timings.append(UnitTiming(key, timed.worker, at, timed.started, timed.ended, time.time()))
                yield key, timed.result
        finally:  # Ctrl-C, an error, or the caller stopping early: nothing is left running
            self._client.cancel([f for f in submitted if not f.done()])

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()


def check_executor(name: str, scheduler: str | None = None, workers: int | None = None, jobs: int = 1) -> None:
    """Raise UsageError for ``--scheduler`` or ``--workers`` without ``--executor dask``, both
    given, or ``--jobs`` above 1 with Dask (before anything is started or written)."""
    if not 1 <= jobs <= MAX_JOBS:
        raise UsageError(f"--jobs {jobs}: use 1 to {MAX_JOBS}")
    if name == "dask" and jobs > 1:
        raise UsageError("--jobs runs units on threads of this process; with --executor dask the workers run them")
    if name == "local" and (scheduler is not None or workers is not None):
        raise UsageError(f"{'--scheduler' if scheduler is not None else '--workers'} needs --executor dask")
    if scheduler is not None and workers is not None:
        raise UsageError("--workers starts a local cluster; with --scheduler the cluster's own workers run the units")


def make_executor(name: str, scheduler: str | None = None, workers: int | None = None, jobs: int = 1) -> Executor:
    """The executor ``--executor name`` (and ``--jobs``) asks for; ``workers`` None means 2
    local workers.

    Raises:
        UsageError: what :func:`check_executor` refuses; dask missing.
    """
    check_executor(name, scheduler, workers, jobs)
    if name == "dask":
        return DaskExecutor(scheduler, workers or 2)
    return ThreadExecutor(jobs) if jobs > 1 else LocalExecutor()


def parse_shard(text: str) -> tuple[int, int]:
    """``i/N`` (1-based) as ``(i, N)``.

    Raises:
        UsageError: not of that form, or i outside 1..N.
    """
    left, _, right = text.partition("/")
    if not (left.isdigit() and right.isdigit()) or not 1 <= int(left) <= int(right):
        raise UsageError(f"--shard {text!r}: expected i/N with 1 <= i <= N, e.g. 1/4")
    return int(left), int(right)


def shard_slice(keys: Sequence[str], index: int, count: int) -> list[str]:
    """The keys shard ``index`` of ``count`` runs: sorted, every ``count``-th from the
    ``index``-th (1-based), so any machine computes the same slice from the same keys."""
    return sorted(keys)[index - 1::count]
