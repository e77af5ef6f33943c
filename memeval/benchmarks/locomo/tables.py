"""LoCoMo's headline numbers: the mean score per category with n, and overall both with and
without category 5 (adversarial), since including it moves the headline and a system that
always says "not mentioned" scores 1 on every category-5 row. A question not scored is counted
in ``unscored``, never as wrong; a bucket with n = 0 has no value, never 0%.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memeval.benchmarks.base import Score, ScoreTable
from memeval.benchmarks.locomo.judge import LOCOMO_J
from memeval.benchmarks.locomo.model import LOCOMO_CATEGORIES, LOCOMO_IDS
from memeval.benchmarks.tables import MeanScore, mean_score, pct
from memeval.record import ProbeResult


@dataclass(frozen=True)
class LocomoOutcome:
    """One LoCoMo question's score in [0, 1] (F1, or 1/0 from a judge), or None when unscored."""

    question_id: str
    category: int
    score: float | None


@dataclass(frozen=True)
class LocomoTable:
    """Per-category means (category ids 1-5 by their real names) and both overall policies."""

    per_category: tuple[MeanScore, ...]
    with_adversarial: MeanScore
    without_adversarial: MeanScore
    unscored: int
    policy: str = ("overall is reported twice: with category 5 (adversarial) and without it; "
                   "categories are the file's ids: " + ", ".join(f"{k} {v}" for k, v in LOCOMO_CATEGORIES.items()))


def locomo_table(outcomes: Iterable[LocomoOutcome]) -> LocomoTable:
    """Aggregate LoCoMo scores."""
    items = list(outcomes)
    scored = [(o.category, o.score) for o in items if o.score is not None]
    return LocomoTable(
        per_category=tuple(mean_score(f"{c} {n}", [s for k, s in scored if k == c]) for c, n in LOCOMO_CATEGORIES.items()),
        with_adversarial=mean_score("overall, with category 5", [s for _, s in scored]),
        without_adversarial=mean_score("overall, without category 5", [s for k, s in scored if k != 5]),
        unscored=len(items) - len(scored))


def table(probes: Sequence[ProbeResult], title: str, grader: str | None, score: Score) -> ScoreTable:
    """The report table of ``probes`` scored by ``score``. Under mem0's J, category 5 is left
    out (J does not score it) and overall is reported once, without it."""
    skips_5 = grader == LOCOMO_J.name
    outcomes = [LocomoOutcome(p.id, LOCOMO_IDS.get(p.category or "", 0), score(p)) for p in probes]
    skipped = sum(1 for o in outcomes if o.category == 5) if skips_5 else 0
    result = locomo_table(o for o in outcomes if not (skips_5 and o.category == 5))
    shown = [m for m in result.per_category if not (skips_5 and m.name.startswith("5 "))]
    rows = [(m.name, pct(m.mean), str(m.n)) for m in shown]
    rows += [(result.without_adversarial.name, pct(result.without_adversarial.mean), str(result.without_adversarial.n))]
    if not skips_5:
        rows.insert(len(shown), (result.with_adversarial.name, pct(result.with_adversarial.mean),
                                 str(result.with_adversarial.n)))
    policy = result.policy if not skips_5 else \
        f"mem0's J does not score category 5 (adversarial): {skipped} question(s) skipped, in no n"
    notes: tuple[str, ...] = (f"Policy: {policy}.",)
    if result.unscored:
        notes += (f"{result.unscored} question(s) unscored; excluded from every n.",)
    return ScoreTable(title, tuple(rows), notes)
