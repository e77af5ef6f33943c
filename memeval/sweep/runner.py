"""Scheduling a sweep: its cells ``parallel`` at a time, then the summary.

Each cell runs in a worker thread that owns its server (started and torn down by the cell) and
waits on a ``memeval run`` process, so a crash, hang or bug in one run stays in its cell. Ctrl-C
(or SIGTERM, which would otherwise kill the sweep and orphan the servers, as they run in their
own sessions) stops new cells, terminates the live runs, waits for every cell to tear its server
down, writes the summary of what finished, and raises :class:`memeval.errors.Interrupted` (exit
130).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from types import FrameType

from memeval.errors import Interrupted
from memeval.util.interruptible import completed, deferred_interrupts, handling
from memeval.runner.executor import Executor, shard_slice
from memeval.spec.matrix import Matrix
from memeval.sweep.cell import CellResult, Progress, run_cell
from memeval.sweep.cells import Cell, plan_cells
from memeval.sweep.control import Control
from memeval.sweep.ports import PortPool
from memeval.sweep.remote import run_remote
from memeval.sweep.summary import summarise, write_summary

@dataclass(frozen=True)
class SweepOptions:
    """Command-line overrides of the matrix: None keeps the matrix's value."""

    repeat: int | None = None
    parallel: int | None = None
    out: str | None = None
    profiles: tuple[str, ...] = ()
    templates: str | None = None
    executor: Executor | None = None
    """Where the cells run (None: threads here, ``parallel`` at a time)."""
    shard: tuple[int, int] | None = None
    """``(i, N)``: run only slice i of N, the cells sorted by label, every N-th from the i-th."""


@dataclass(frozen=True)
class SweepResult:
    """Where the sweep wrote, every cell's outcome, and the summary Markdown."""

    folder: str
    results: tuple[CellResult, ...]
    summary: str

    @property
    def failed(self) -> list[CellResult]:
        """The cells that did not complete."""
        return [r for r in self.results if r.status != "ok"]


def run_sweep(matrix: Matrix, options: SweepOptions, environ: Mapping[str, str] = os.environ,
              progress: Progress = lambda _: None) -> SweepResult:
    """Run every cell of ``matrix`` and write ``summary.{md,json}`` into the output folder
    (``options.out``, else ``runs/<matrix>``).

    Raises:
        UsageError: ``options.profiles`` names an unknown profile.
        Interrupted: Ctrl-C; servers are torn down and the summary is written first.
    """
    folder = options.out or os.path.join("runs", matrix.name)
    repeat = options.repeat or matrix.repeat
    cells, skipped = plan_cells(matrix, folder, repeat, options.profiles, environ)
    for line in skipped:
        progress(line)
    if options.shard:
        keep = set(shard_slice([c.label for c in cells], *options.shard))
        cells = [c for c in cells if c.label in keep]
    control = Control()
    if options.executor is not None and options.executor.remote:
        # SIGTERM as Ctrl-C; the remote executor's iterator waits without steps, so it raises.
        with handling((signal.SIGTERM,), _raise_interrupt):
            results, interrupted = _schedule_remote(matrix, cells, options.executor, progress)
    else:
        with deferred_interrupts():
            results, interrupted = _schedule(matrix, cells, options.parallel or matrix.parallel, control, progress)
    summary = write_summary(folder, summarise(matrix, results, skipped, options.shard), options.templates)
    if interrupted:
        raise Interrupted(f"sweep interrupted; every server was stopped; partial summary in {folder}")
    return SweepResult(folder, tuple(results), summary)


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _schedule_remote(matrix: Matrix, cells: list[Cell], executor: Executor,
                     progress: Progress) -> tuple[list[CellResult], bool]:
    """As :func:`_schedule`, each cell on ``executor``; this process writes every cell's files."""
    done: dict[Cell, CellResult] = {}
    interrupted = False
    try:
        for cell, result in run_remote(matrix, cells, executor, progress):
            done[cell] = result
    except KeyboardInterrupt:
        interrupted = True
        progress("interrupted: cancelling the cells not yet finished")
    return [done.get(c) or CellResult(c, "interrupted", "the sweep was interrupted before this cell finished")
            for c in cells], interrupted


def _schedule(matrix: Matrix, cells: list[Cell], parallel: int, control: Control,
              progress: Progress) -> tuple[list[CellResult], bool]:
    """Every cell's result in plan order, and whether Ctrl-C stopped the sweep."""
    ports = PortPool(*matrix.ports)
    done: dict[Cell, CellResult] = {}
    executor = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="cell")
    futures: dict[Future[CellResult], Cell] = {}
    interrupted = False
    try:
        for cell in cells:
            futures[executor.submit(run_cell, matrix, cell, ports, control, progress)] = cell
        for future in completed(futures):  # not as_completed: Ctrl-C must not wait for a cell
            done[futures[future]] = future.result()
    except KeyboardInterrupt:
        interrupted = True
        progress("interrupted: stopping the runs and tearing the servers down")
        control.stop()
    finally:
        executor.shutdown(wait=True, cancel_futures=True)
    for future, cell in futures.items():
        if cell not in done:
            done[cell] = future.result() if future.done() and not future.cancelled() else CellResult(
                cell, "interrupted", "the sweep was interrupted before this cell started")
    return [done[c] for c in cells], interrupted
