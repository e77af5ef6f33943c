"""The benchmarks' headline numbers, computed the way their authors report them, with n.

LongMemEval (``print_qa_metrics.py``): accuracy per question type (abstention questions count
inside their types as well), the task-averaged accuracy (the mean of the type means), the overall
accuracy, and the abstention accuracy. LoCoMo: the mean score per category with n, and overall
both with and without category 5 (adversarial), since including it moves the headline and a
system that always says "not mentioned" scores 1 on every category-5 row.

A question not judged (no model, an unreadable judge reply) is counted in ``unscored``, never as
wrong; a bucket with n = 0 has no value, never 0%.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from memeval.datasets.model import LOCOMO_CATEGORIES, LONGMEMEVAL_TYPES
from memeval.stats.basic import Rate, mean_ci, rate


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


@dataclass(frozen=True)
class LocomoOutcome:
    """One LoCoMo question's score in [0, 1] (F1, or 1/0 from a judge), or None when unscored."""

    question_id: str
    category: int
    score: float | None


@dataclass(frozen=True)
class MeanScore:
    """A mean score over n questions, with a 95% interval (None below two questions)."""

    name: str
    n: int
    mean: float | None
    ci95: tuple[float, float] | None


@dataclass(frozen=True)
class LocomoTable:
    """Per-category means (category ids 1-5 by their real names) and both overall policies."""

    per_category: tuple[MeanScore, ...]
    with_adversarial: MeanScore
    without_adversarial: MeanScore
    unscored: int
    policy: str = ("overall is reported twice: with category 5 (adversarial) and without it; "
                   "categories are the file's ids: " + ", ".join(f"{k} {v}" for k, v in LOCOMO_CATEGORIES.items()))


def _mean(name: str, scores: list[float]) -> MeanScore:
    mean, ci = mean_ci(scores, bounds=(0.0, 1.0))
    return MeanScore(name, len(scores), mean, ci)


def locomo_table(outcomes: Iterable[LocomoOutcome]) -> LocomoTable:
    """Aggregate LoCoMo scores."""
    items = list(outcomes)
    scored = [o for o in items if o.score is not None]
    return LocomoTable(
        per_category=tuple(_mean(f"{c} {n}", [o.score for o in scored if o.category == c])  # type: ignore[misc]
                           for c, n in LOCOMO_CATEGORIES.items()),
        with_adversarial=_mean("overall, with category 5", [o.score for o in scored]),  # type: ignore[misc]
        without_adversarial=_mean("overall, without category 5",
                                  [o.score for o in scored if o.category != 5]),  # type: ignore[misc]
        unscored=len(items) - len(scored))


def pct(value: float | None) -> str:
    """A fraction as a percentage to one place, or ``–`` for no value (never 0%)."""
    return "–" if value is None else f"{100 * value:.1f}%"
