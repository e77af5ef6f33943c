"""Grouping run records into configurations (sides) and choosing the baseline."""

from __future__ import annotations

from dataclasses import dataclass

from memeval.errors import UsageError
from memeval.record import RunRecord
from memeval.util.suggest import did_you_mean

BASELINE = "baseline"


@dataclass(frozen=True)
class Side:
    """One configuration: its name (the runs' profile, else their label) and its repeat runs,
    in the order they were given."""

    name: str
    runs: tuple[RunRecord, ...]

    @property
    def flags(self) -> dict[str, str]:
        """The flags the side ran with (those of its first run)."""
        return dict(self.runs[0].flags)


def side_name(record: RunRecord) -> str:
    """The configuration a run belongs to: its profile, falling back to its label."""
    return record.profile or record.label or "?"


def group_runs(records: list[RunRecord]) -> list[Side]:
    """Runs grouped by :func:`side_name`, sides in order of first appearance."""
    by_name: dict[str, list[RunRecord]] = {}
    for record in records:
        by_name.setdefault(side_name(record), []).append(record)
    return [Side(name, tuple(runs)) for name, runs in by_name.items()]


def order_sides(sides: list[Side], baseline: str | None = None) -> list[Side]:
    """``sides`` with the baseline first: ``baseline`` when given, else the side named
    ``baseline``, else the first.

    Raises:
        UsageError: ``baseline`` names no side.
    """
    names = [s.name for s in sides]
    wanted = baseline or (BASELINE if BASELINE in names else names[0])
    if wanted not in names:
        raise UsageError(f"--baseline: no runs of {wanted!r}{did_you_mean(wanted, names)}; profiles: {', '.join(names)}")
    return sorted(sides, key=lambda s: s.name != wanted)


def flags_changed(base: dict[str, str], flags: dict[str, str]) -> list[str]:
    """``KEY=value`` for every flag set differently from ``base``, ``KEY unset`` for one only
    ``base`` sets; sorted by key."""
    out = []
    for key in sorted(set(base) | set(flags)):
        if key not in flags:
            out.append(f"{key} unset")
        elif base.get(key) != flags[key]:
            out.append(f"{key}={flags[key]}")
    return out
