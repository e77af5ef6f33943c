"""The runs under a folder, found by their run.json files: what ``memeval ls`` lists and what
``memeval compare --latest N LABEL`` compares.

A run is a folder holding ``run.json``; ``latest`` links and links to folders are not followed,
so each run is found once. Records are read whole (no index is kept); a file that is not a
run record this memeval reads is reported beside the runs, never dropped in silence.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from memeval.errors import UsageError
from memeval.record import RunRecord
from memeval.report.files import read_run
from memeval.report.view import fmt_kpi

HEADLINES = ("pack hit (synthesis)", "pack hit (recall)")
"""The KPI a run is summed up by, the first it has; else its first measured KPI."""


@dataclass(frozen=True)
class FoundRun:
    """One run: where its run.json is, and the record."""

    path: str
    record: RunRecord


@dataclass(frozen=True)
class Found:
    """The runs under a folder, newest first, and the run.json files that could not be read."""

    runs: tuple[FoundRun, ...]
    unreadable: tuple[str, ...]


def find_runs(folder: str) -> Found:
    """Every run.json under ``folder`` (itself included), newest first (``created_at``, then run id).

    Raises:
        UsageError: ``folder`` is not a folder.
    """
    if not os.path.isdir(folder):
        raise UsageError(f"{folder}: not a folder of runs")
    runs, unreadable = [], []
    for where, dirs, files in os.walk(folder):  # os.walk does not follow links to folders
        dirs.sort()
        if "run.json" in files and not os.path.islink(os.path.join(where, "run.json")):
            path = os.path.join(where, "run.json")
            try:
                runs.append(FoundRun(path, read_run(path)))
            except UsageError as err:
                unreadable.append(str(err))
    runs.sort(key=lambda r: (r.record.created_at, r.record.run_id), reverse=True)
    return Found(tuple(runs), tuple(unreadable))


def summary_line(run: FoundRun) -> str:
    """One line: label, run id, suite, engine (as the run named it), date, headline KPI with its n, path."""
    r = run.record
    return "  ".join((r.label, r.run_id, r.suite.name, r.options.engine, r.created_at, headline(r), run.path))


def headline(record: RunRecord) -> str:
    """``pack hit (synthesis) 92.0% (n=100)``, or ``no KPI measured``."""
    kpis = {k.name: k for k in record.kpis}
    chosen = next((kpis[name] for name in HEADLINES if name in kpis), None)
    chosen = chosen or next((k for k in record.kpis if k.value is not None), None)
    if chosen is None:
        return "no KPI measured"
    return f"{chosen.name} {fmt_kpi(chosen.value, chosen.unit)} (n={chosen.n})"


def latest(folder: str, label: str, count: int) -> list[RunRecord]:
    """The last ``count`` runs labelled ``label`` under ``folder``, oldest first (the baseline),
    each relabelled ``LABEL@RUN_ID`` so that compare sees them as sides, not repeats.

    Raises:
        UsageError: fewer than ``count`` runs have that label (the labels found are named).
    """
    found = find_runs(folder).runs
    mine = [r.record for r in found if r.record.label == label][:count]
    if len(mine) < count:
        labels = sorted({r.record.label for r in found})
        raise UsageError(f"--latest {count} {label}: {len(mine)} run(s) labelled {label!r} under {folder}"
                         f"; labels there: {', '.join(labels) or 'none'}")
    return [dataclasses.replace(r, label=f"{r.label}@{r.run_id}", profile=None) for r in reversed(mine)]
