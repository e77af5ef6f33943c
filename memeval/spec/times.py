"""Spec time arithmetic: the one place a day offset and seconds become an instant.

The planner dates every write with :func:`instant`; the loader calls :func:`timeline_issues` so
that a date that cannot be computed (an epoch of 2026-02-30, a day past the year 9999, a turn
spacing that overflows) is refused at validation instead of crashing a run.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from memeval.errors import SpecIssue
from memeval.spec.checks import Located, items, number, whole

DEFAULT_EPOCH = "2026-09-01T09:00:00Z"
DEFAULT_SPACING_S = 60.0


def instant(epoch: str, day: int, seconds: float = 0.0) -> datetime:
    """The UTC instant ``day`` days and ``seconds`` after ``epoch`` (``YYYY-MM-DDTHH:MM[:SS]Z``).

    Raises:
        ValueError: ``epoch`` is not a real date and time, or the instant falls outside the
            years 1 to 9999.
    """
    try:
        base = datetime.fromisoformat(epoch.replace("Z", "+00:00"))
        return (base + timedelta(days=day, seconds=seconds)).astimezone(timezone.utc)
    except OverflowError:
        raise ValueError("falls past the year 9999") from None


def epoch_issue(defaults: Any, file: str, at: tuple[int, int]) -> SpecIssue | None:
    """The issue with ``defaults.epoch`` when it is text but not a real date, else None."""
    epoch = defaults.get("epoch") if isinstance(defaults, dict) else None
    if not isinstance(epoch, str):
        return None
    try:
        instant(epoch, 0)
    except ValueError as err:
        return SpecIssue(file, at[0], at[1], "defaults.epoch", f"{epoch!r} is not a real date and time ({err})")
    return None


def timeline_issues(loc: Located, defaults: Any) -> list[SpecIssue]:
    """Every dated record of one scenario whose time cannot be computed: documents and learnings
    at ``epoch + day``, a thread's last turn at ``epoch + day + spacing × (turns − 1)``. Skipped
    when the epoch itself is invalid (reported once by :func:`epoch_issue`)."""
    defaults = defaults if isinstance(defaults, dict) else {}
    epoch = defaults.get("epoch", DEFAULT_EPOCH)
    spacing = number(defaults.get("turn_spacing_s", DEFAULT_SPACING_S))
    if not isinstance(epoch, str) or spacing is None or epoch_issue(defaults, "", (0, 0)):
        return []
    issues = []
    for section in ("documents", "learnings"):
        for i, rec in items(loc.data, section):
            day = whole(rec.get("day"))
            if day is not None and not _computable(epoch, day, 0.0):
                issues.append(loc.issue((section, i, "day"), f"day {day} after {epoch} falls past the year 9999"))
    for i, thread in items(loc.data, "threads"):
        day = whole(thread.get("day", 0))
        exchanges = thread.get("exchanges")
        turns = 2 * len(exchanges) if isinstance(exchanges, list) else 2
        if day is not None and not _computable(epoch, day, (turns - 1) * spacing):
            where = ("threads", i, "day") if "day" in thread else ("threads", i)
            issues.append(loc.issue(where, f"the thread's last turn (day {day} + {turns - 1} turns × {spacing:g} s "
                                    f"after {epoch}) falls past the year 9999"))
    return issues


def _computable(epoch: str, day: int, seconds: float) -> bool:
    try:
        instant(epoch, day, seconds)
    except ValueError:
        return False
    return True
