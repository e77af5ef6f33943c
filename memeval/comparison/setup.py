"""Refusing unfair comparisons: runs are compared only when their scoring setups
(:mod:`memeval.score.setup`) agree outside what is being compared.

What is compared by default (:data:`SUBJECT`) is the memory under test: the ``engine`` block of
the setup (engine name, adapter and server versions, flags and settings), plus the run's label
and profile, which are not part of the setup. Any other difference — the suite or its spec, the
dataset, grading, pack policy, the answer model or the judge — makes :func:`check_setups` refuse,
naming every differing field as a dotted path (``judge.prompt.sha256``), unless the user names
it (or a prefix of it, ``judge.prompt``) as an allowed difference. A sweep compares profiles,
which differ by their flags only (:data:`SWEEP_SUBJECT`).
"""

from __future__ import annotations

from collections.abc import Sequence

from memeval.errors import UsageError
from memeval.record import RunRecord
from memeval.score.setup import flatten, setup_of

SUBJECT = ("engine",)
"""Setup fields ``memeval compare`` compares by default: the memory under test."""
SWEEP_SUBJECT = ("engine.flags",)
"""Setup fields a sweep's profiles may differ in: their flags."""


class SetupMismatch(UsageError):
    """Runs whose setups differ outside what is compared (exit 2); the message names the fields."""


def covered(path: str, fields: Sequence[str]) -> bool:
    """Whether ``path`` is one of ``fields`` or lies under one of them."""
    return any(path == f or path.startswith(f + ".") for f in fields)


def differences(base: RunRecord, other: RunRecord, subject: Sequence[str] = SUBJECT) -> dict[str, tuple[object, object]]:
    """Dotted setup path → (base value, other value) for every field outside ``subject`` that
    differs, sorted by path."""
    a, b = flatten(setup_of(base)), flatten(setup_of(other))
    paths = sorted(p for p in set(a) | set(b) if a.get(p) != b.get(p) and not covered(p, subject))
    return {p: (a.get(p), b.get(p)) for p in paths}


def check_setups(records: Sequence[RunRecord], allowed: Sequence[str] = (), subject: Sequence[str] = SUBJECT) -> None:
    """Refuse ``records`` (against the first) when their setups differ outside ``subject`` and
    ``allowed``.

    Raises:
        SetupMismatch: one line per differing field, each run named by its label and run id,
            and how to accept the difference.
    """
    lines: dict[str, None] = {}
    fields: dict[str, None] = {}
    for other in records[1:]:
        for path, (x, y) in differences(records[0], other, (*subject, *allowed)).items():
            lines[f"  {path}: {_short(x)} ({_name(records[0])}) vs {_short(y)} ({_name(other)})"] = None
            fields[path] = None
    if lines:
        raise SetupMismatch("compare: the runs were scored under different setups, so their numbers are not "
                            "comparable:\n" + "\n".join(lines) +
                            f"\nto compare them anyway, name the differences: --allow-setup-diff {','.join(sorted(fields))}")


def labels(base: RunRecord, runs: Sequence[RunRecord], allowed: Sequence[str], subject: Sequence[str] = SUBJECT) -> list[str]:
    """The allowed setup differences of ``runs`` from ``base``, as the fields of ``allowed`` that
    matched (what every cell of the side is labelled with), in ``allowed`` order."""
    found = {p for run in runs for p in differences(base, run, subject)}
    return [f for f in allowed if any(covered(p, (f,)) for p in found)]


def split_comparable(records: Sequence[RunRecord], subject: Sequence[str] = SWEEP_SUBJECT) -> tuple[list[RunRecord], list[str]]:
    """``records`` that share the first one's setup outside ``subject``, and one line per record
    left out (its label and the first differing fields)."""
    kept, dropped = list(records[:1]), []
    for record in records[1:]:
        diff = differences(records[0], record, subject)
        if diff:
            dropped.append(f"{record.profile or record.label} ({record.run_id}): setup differs in {', '.join(list(diff)[:5])}")
        else:
            kept.append(record)
    return kept, dropped


def _name(record: RunRecord) -> str:
    return f"{record.profile or record.label} {record.run_id}"


def _short(value: object) -> str:
    text = "none" if value is None else str(value)
    return text if len(text) <= 40 else text[:37] + "…"
