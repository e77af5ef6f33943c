"""Helpers for the benchmarks' headline tables (each benchmark's own are in its subpackage,
``memeval.benchmarks.<name>.tables``, and reach the report through
:meth:`~memeval.benchmarks.base.Benchmark.table`): a mean score with n and its interval, and a fraction as
report text. A bucket with n = 0 has no value, never 0%.
"""

from __future__ import annotations

from dataclasses import dataclass

from memeval.stats.basic import mean_ci


@dataclass(frozen=True)
class MeanScore:
    """A mean score over n questions, with a 95% interval (None below two questions)."""

    name: str
    n: int
    mean: float | None
    ci95: tuple[float, float] | None


def mean_score(name: str, scores: list[float]) -> MeanScore:
    """The mean of ``scores`` (each in [0, 1]) with its interval, named ``name``."""
    mean, ci = mean_ci(scores, bounds=(0.0, 1.0))
    return MeanScore(name, len(scores), mean, ci)


def pct(value: float | None) -> str:
    """A fraction as a percentage to one place, or ``–`` for no value (never 0%)."""
    return "–" if value is None else f"{100 * value:.1f}%"
