"""Comparing runs: configurations side by side against a baseline, with statistics that
separate signal from noise. The library function is :func:`memeval.compare`
(:func:`memeval.api.compare`).

    comparison = compare_files(["runs/a/run.json", "runs/b/run.json"])
    text = render_comparison(comparison)

Every run is its own side; repeats (``--repeat`` runs, a sweep's profile) are grouped and
averaged (:mod:`memeval.comparison.groups`); a change counts only beyond the noise rule
(:mod:`memeval.comparison.noise`) and, for KPIs read off probe outcomes, a paired test
(:mod:`memeval.comparison.paired`); :mod:`memeval.comparison.table` builds the JSON result and
:mod:`memeval.comparison.view` renders it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from memeval.comparison.groups import group_runs, order_sides
from memeval.comparison.setup import SUBJECT, check_setups
from memeval.comparison.suites import check_suites
from memeval.comparison.table import Comparison, compare_sides, regressions
from memeval.comparison.view import render_comparison
from memeval.errors import UsageError
from memeval.record import RunRecord
from memeval.report.files import read_run
from memeval.score.unsupported import mark_unsupported

__all__ = ["compare_files", "compare_records", "regressions", "render_comparison"]


def compare_records(records: list[RunRecord], baseline: str | None = None, allow_setup_diff: Sequence[str] = (),
                    subject: Sequence[str] = SUBJECT, group_by: str = "run") -> Comparison:
    """Compare run records (see :mod:`memeval.comparison.table` for the result), each run its own
    side unless it is a repeat (:mod:`memeval.comparison.groups`), refusing runs of different suites
    unless ``suite`` is allowed (:mod:`memeval.comparison.suites`) and runs whose scoring setups
    differ outside ``subject`` and ``allow_setup_diff`` (:mod:`memeval.comparison.setup`); a side
    with allowed differences has them as labels.

    Raises:
        UsageError: no records, ``baseline`` names no profile, or an unknown ``group_by``.
        SetupMismatch: different suites, or setups that differ in a field not allowed (exit 2,
            the fields named).
    """
    if not records:
        raise UsageError("compare: no run.json files given")
    check_suites(records, allow_setup_diff)
    records = [replace(r, kpis=mark_unsupported(r.kpis, r.engine.capabilities)) for r in records]  # older records too
    sides = order_sides(group_runs(records, group_by), baseline)
    base = sides[0].runs[0]
    check_setups([base, *(r for s in sides for r in s.runs if r is not base)], allow_setup_diff, subject)
    return compare_sides(sides, tuple(allow_setup_diff), tuple(subject))


def compare_files(paths: list[str], baseline: str | None = None, allow_setup_diff: Sequence[str] = (),
                  group_by: str = "run") -> Comparison:
    """Read run.json files and compare them.

    Raises:
        UsageError: no files, a file that is not a run.json (the message names it), an
            unknown ``baseline``, or setups that differ outside what is allowed.
    """
    return compare_records([read_run(p) for p in paths], baseline, allow_setup_diff, group_by=group_by)
