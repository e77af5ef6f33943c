"""Progress of a run as typed events, and the two ways of showing them: a live display (rich)
on a terminal, one plain line per event otherwise. ``--quiet`` shows none."""

from __future__ import annotations

import contextlib
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from memeval.plan import Step as PlanStep
from memeval.plan import StepKind

if TYPE_CHECKING:  # rich loads only for a live display on a terminal
    from rich.console import Console

Step = Literal["note", "running", "stage", "checkpoint", "done", "answering"]
STAGES: dict[StepKind, str] = {"write_document": "writes", "write_learning": "writes", "exchange": "writes", "replay": "writes",
                               "settle": "settle", "forget_declared": "forget", "probe": "probes",
                               "synthesise": "synthesis", "forget_all": "cleanup"}
"""The stage of a scenario a planned step belongs to, as the display names it."""


@dataclass(frozen=True)
class ProgressEvent:
    """One step of a run. ``scenario`` is None for a run-wide step; ``index`` of ``total``
    counts scenarios (1-based; 0 when not about one); ``text`` is the line a log shows. A
    ``stage`` event names the scenario's stage (writes, settle, probes, synthesis…) in
    ``stage``, with ``done`` of ``of`` of its steps started."""

    step: Step
    text: str
    scenario: str | None = None
    index: int = 0
    total: int = 0
    stage: str = ""
    done: int = 0
    of: int = 0


Progress = Callable[[ProgressEvent], None]


def stage_events(scenario: str, place: tuple[int, int], steps: tuple[PlanStep, ...]) -> tuple[ProgressEvent, ...]:
    """The ``stage`` event of each step of a scenario's plan, in order: its stage and how far
    into it (one pass over the plan, not one per step)."""
    stages = [STAGES[step.kind] for step in steps]
    of = Counter(stages)
    done: Counter[str] = Counter()
    events = []
    for stage in stages:
        done[stage] += 1
        events.append(ProgressEvent("stage", f"scenario {scenario}: {stage} {done[stage]}/{of[stage]}", scenario, *place,
                                    stage=stage, done=done[stage], of=of[stage]))
    return tuple(events)


def silent(event: ProgressEvent) -> None:
    """Show nothing (``--quiet``)."""


def lines(echo: Callable[[str], None]) -> Progress:
    """One plain line per event, for a log or a pipe; of the ``stage`` events the first of each
    stage and then each quarter of it (``scenario x: writes 1/18``, ``5/18``, ``9/18``, ``14/18``,
    ``18/18``), not one per probe."""

    def show(event: ProgressEvent) -> None:
        if event.step != "stage" or event.done == 1 or event.done * 4 // event.of > (event.done - 1) * 4 // event.of:
            echo(event.text)

    return show


@contextlib.contextmanager
def live(console: Console) -> Iterator[Progress]:
    """A live display on ``console``: scenarios done of all, the step under way, elapsed and
    ETA; each finished scenario's line is printed above it."""
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress as RichProgress, SpinnerColumn, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)

    bar = RichProgress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=console, transient=True)
    task = bar.add_task("starting", total=None)

    def show(event: ProgressEvent) -> None:
        if event.total:
            bar.update(task, total=event.total)
        if event.step in ("done", "checkpoint"):
            bar.update(task, completed=event.index)
        if event.step in ("running", "stage", "answering"):
            bar.update(task, description=event.text)
        else:
            console.print(event.text, markup=False, highlight=False)

    with bar:
        yield show


@contextlib.contextmanager
def display(echo: Callable[[str], None], quiet: bool) -> Iterator[Progress]:
    """The display a run gets: none with ``quiet``, live on a terminal (stderr, where progress
    goes), plain lines through ``echo`` otherwise."""
    if quiet:
        yield silent
    elif sys.stderr.isatty():
        from rich.console import Console

        with live(Console(stderr=True)) as show:
            yield show
    else:
        yield lines(echo)
