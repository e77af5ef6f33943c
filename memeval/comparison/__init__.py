"""Comparing runs: configurations side by side against a baseline, with statistics that
separate signal from noise. The library function is :func:`memeval.compare`
(:func:`memeval.api.compare`).

    comparison = compare_files(["runs/a/run.json", "runs/b/run.json"])
    text = render_comparison(comparison)

Runs are grouped by profile (else label) and their repeats averaged
(:mod:`memeval.comparison.groups`); a change counts only beyond the noise rule
(:mod:`memeval.comparison.noise`) and, for KPIs read off probe outcomes, a paired test
(:mod:`memeval.comparison.paired`); :mod:`memeval.comparison.table` builds the JSON result and
:mod:`memeval.comparison.view` renders it.
"""

from __future__ import annotations

from collections.abc import Sequence

from memeval.comparison.groups import group_runs, order_sides
from memeval.comparison.setup import SUBJECT, check_setups
from memeval.comparison.table import Comparison, compare_sides, regressions
from memeval.comparison.view import render_comparison
from memeval.errors import UsageError
from memeval.record import RunRecord
from memeval.report.files import read_run

__all__ = ["compare_files", "compare_records", "regressions", "render_comparison"]


def compare_records(records: list[RunRecord], baseline: str | None = None, allow_setup_diff: Sequence[str] = (),
                    subject: Sequence[str] = SUBJECT) -> Comparison:
    """Compare run records (see :mod:`memeval.comparison.table` for the result), refusing runs
    whose scoring setups differ outside ``subject`` and ``allow_setup_diff``
    (:mod:`memeval.comparison.setup`); a side with allowed differences has them as labels.

    Raises:
        UsageError: no records, or ``baseline`` names no profile.
        SetupMismatch: setups differ in a field not allowed (exit 2, the fields named).
    """
    if not records:
        raise UsageError("compare: no run.json files given")
    sides = order_sides(group_runs(records), baseline)
    base = sides[0].runs[0]
    check_setups([base, *(r for s in sides for r in s.runs if r is not base)], allow_setup_diff, subject)
    return compare_sides(sides, tuple(allow_setup_diff), tuple(subject))


def compare_files(paths: list[str], baseline: str | None = None, allow_setup_diff: Sequence[str] = ()) -> Comparison:
    """Read run.json files and compare them.

    Raises:
        UsageError: no files, a file that is not a run.json (the message names it), an
            unknown ``baseline``, or setups that differ outside what is allowed.
    """
    return compare_records([read_run(p) for p in paths], baseline, allow_setup_diff)
