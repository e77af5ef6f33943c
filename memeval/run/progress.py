"""Progress of a run as typed events, and the two ways of showing them: a live display (rich)
on a terminal, one plain line per event otherwise. ``--quiet`` shows none."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress as RichProgress, SpinnerColumn, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)

Step = Literal["note", "running", "checkpoint", "done", "answering"]


@dataclass(frozen=True)
class ProgressEvent:
    """One step of a run. ``scenario`` is None for a run-wide step; ``index`` of ``total``
    counts scenarios (1-based; 0 when not about one); ``text`` is the line a log shows."""

    step: Step
    text: str
    scenario: str | None = None
    index: int = 0
    total: int = 0


Progress = Callable[[ProgressEvent], None]


def silent(event: ProgressEvent) -> None:
    """Show nothing (``--quiet``)."""


def lines(echo: Callable[[str], None]) -> Progress:
    """One plain line per event, for a log or a pipe."""
    return lambda event: echo(event.text)


@contextlib.contextmanager
def live(console: Console) -> Iterator[Progress]:
    """A live display on ``console``: scenarios done of all, the step under way, elapsed and
    ETA; each finished scenario's line is printed above it."""
    bar = RichProgress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=console, transient=True)
    task = bar.add_task("starting", total=None)

    def show(event: ProgressEvent) -> None:
        if event.total:
            bar.update(task, total=event.total)
        if event.step in ("done", "checkpoint"):
            bar.update(task, completed=event.index)
        if event.step in ("running", "answering"):
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
        with live(Console(stderr=True)) as show:
            yield show
    else:
        yield lines(echo)
