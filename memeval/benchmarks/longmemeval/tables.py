"""LongMemEval's headline numbers, computed as its authors report them (``print_qa_metrics.py``),
with n: accuracy per question type (abstention questions count inside their types as well), the
task-averaged accuracy (the mean of the type means), the overall accuracy, and the abstention
accuracy. A question not judged is counted in ``unscored``, never as wrong; a bucket with n = 0
has no value, never 0%.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memeval.benchmarks.base import Score, ScoreTable
from memeval.benchmarks.longmemeval.model import LONGMEMEVAL_TYPES
from memeval.benchmarks.tables import pct
from memeval.record import ProbeResult
from memeval.stats.basic import Rate, rate


@dataclass(frozen=True)
class LmeOutcome:
    """One LongMemEval question's verdict: True/False, or None when it was not judged."""

    question_id: str
    question_type: str
    correct: bool | None


@dataclass(frozen=True)
class LmeTable:
    """Per-type rates (in the paper's type order), the aggregates, and how many were unscored.
    ``task_averaged`` is the mean over the types with n > 0 (``types_present`` of six)."""

    per_type: tuple[tuple[str, Rate], ...]
    task_averaged: float | None
    types_present: int
    overall: Rate
    abstention: Rate
    unscored: int


def longmemeval_table(outcomes: Iterable[LmeOutcome]) -> LmeTable:
    """Aggregate LongMemEval verdicts."""
    items = list(outcomes)
    per_type = tuple((t, rate([o.correct for o in items if o.question_type == t])) for t in LONGMEMEVAL_TYPES)
    means = [r.value for _, r in per_type if r.value is not None]
    return LmeTable(
        per_type=per_type, task_averaged=sum(means) / len(means) if means else None, types_present=len(means),
        overall=rate([o.correct for o in items]),
        abstention=rate([o.correct for o in items if o.question_id.endswith("_abs")]),
        unscored=sum(1 for o in items if o.correct is None))


def table(probes: Sequence[ProbeResult], title: str, grader: str | None, score: Score) -> ScoreTable:
    """The report table of ``probes`` scored by ``score`` (a score of 1 is correct)."""
    outcomes = [LmeOutcome(p.id, p.category or "", None if (s := score(p)) is None else s >= 1.0) for p in probes]
    result = longmemeval_table(outcomes)
    rows = [(name, pct(r.value), str(r.n)) for name, r in result.per_type]
    rows += [(f"task-averaged (mean of {result.types_present} of 6 type means)", pct(result.task_averaged), ""),
             ("overall", pct(result.overall.value), str(result.overall.n)),
             ("abstention (_abs)", pct(result.abstention.value), str(result.abstention.n))]
    notes = (f"{result.unscored} question(s) unscored; excluded from every n.",) if result.unscored else ()
    return ScoreTable(title, tuple(rows), notes)
