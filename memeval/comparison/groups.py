"""Grouping run records into configurations (sides) and choosing the baseline.

Every run is its own side unless it says it is a repeat: runs of one ``memeval run --repeat``
(their ``repeat`` note) form one side, and so do a sweep's cells of one profile. Runs that merely
share a label are never merged; ``group_by="label"`` (``memeval compare --group-by label``) asks
for that explicitly. Sides whose names would collide are told apart by ``#1``, ``#2``, … in the
order given.
"""

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


GROUP_BY = ("run", "label")
"""How ``compare`` groups runs: by what the runs say (``run``: repeats and sweep profiles) or by label."""


def side_name(record: RunRecord) -> str:
    """The configuration a run belongs to: its profile, falling back to its label."""
    return record.profile or record.label or "?"


def group_key(record: RunRecord, index: int, group_by: str = "run") -> tuple[str, str]:
    """What makes runs one side: the repeat group of ``--repeat`` runs, a sweep's profile, the
    label when ``group_by`` is ``label``, else the run itself (its position ``index``)."""
    if group_by == "label":
        return ("label", side_name(record))
    if record.repeat is not None:
        return ("repeat", record.repeat.group)
    if record.profile is not None:
        return ("profile", record.profile)
    return ("run", str(index))


def group_runs(records: list[RunRecord], group_by: str = "run") -> list[Side]:
    """Runs grouped by :func:`group_key`, sides in order of first appearance, each named by
    :func:`side_name` (``#k`` added where names collide).

    Raises:
        UsageError: ``group_by`` is not one of :data:`GROUP_BY`.
    """
    if group_by not in GROUP_BY:
        raise UsageError(f"--group-by {group_by!r}: use one of {', '.join(GROUP_BY)}")
    by_key: dict[tuple[str, str], list[RunRecord]] = {}
    for i, record in enumerate(records):
        by_key.setdefault(group_key(record, i, group_by), []).append(record)
    names = [side_name(runs[0]) for runs in by_key.values()]
    seen: dict[str, int] = {}
    sides = []
    for name, runs in zip(names, by_key.values()):
        seen[name] = seen.get(name, 0) + 1
        sides.append(Side(f"{name} #{seen[name]}" if names.count(name) > 1 else name, tuple(runs)))
    return sides


def order_sides(sides: list[Side], baseline: str | None = None) -> list[Side]:
    """``sides`` with the baseline first: ``baseline`` when given (a side's name, or the name
    several sides share before their ``#k``: the first of them), else the side named
    ``baseline``, else the first.

    Raises:
        UsageError: ``baseline`` names no side.
    """
    names = [s.name for s in sides]
    wanted = baseline or (BASELINE if BASELINE in names else names[0])
    if wanted not in names and f"{wanted} #1" in names:
        wanted = f"{wanted} #1"
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
