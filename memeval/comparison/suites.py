"""Refusing to compare runs of different suites: a suite is its name and the scenarios its
spec declares. ``--allow-setup-diff`` on other fields (the spec's hash, the dataset, …) never
lets two suites be compared; only naming ``suite`` itself does. Runs of one suite that ran
different slices of it (``--only``, ``--shard``) are runs of the same suite.
"""

from __future__ import annotations

from collections.abc import Sequence

from memeval.comparison.setup import SetupMismatch
from memeval.record import RunRecord

SUITE = "suite"
"""The ``--allow-setup-diff`` field that lets runs of different suites be compared."""


def suite_identity(record: RunRecord) -> tuple[str, frozenset[str]]:
    """The suite's name and the ids of the scenarios its resolved spec declares."""
    scenarios = record.suite.resolved.get("scenarios")
    ids = {str(s.get("scenario") or s.get("id")) for s in scenarios if isinstance(s, dict)} \
        if isinstance(scenarios, list) else set()
    return record.suite.name, frozenset(ids)


def check_suites(records: Sequence[RunRecord], allowed: Sequence[str] = ()) -> None:
    """Refuse ``records`` unless they are runs of the first one's suite or ``suite`` is allowed.

    Raises:
        SetupMismatch: one line per run of another suite (its name and scenario count).
    """
    if SUITE in allowed or not records:
        return
    base = suite_identity(records[0])
    lines = [f"  {r.label} {r.run_id}: suite {name!r} with {len(ids)} scenarios, "
             f"not {base[0]!r} with {len(base[1])}"
             for r in records[1:] for name, ids in [suite_identity(r)] if (name, ids) != base]
    if lines:
        raise SetupMismatch("compare: the runs are of different suites, so no number of one stands for the other:\n"
                            + "\n".join(lines) + f"\nto compare them anyway, name the suite itself: --allow-setup-diff {SUITE}")
