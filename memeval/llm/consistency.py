"""Self-consistency of a judge: the same answers judged ``--judge-repeats`` times.

Each repeat after the first is asked with a cache salt of its own (:func:`repeat_salt`), so its
calls are really made instead of being read back from the cache; the first keeps the run's salt,
so judging once is exactly what it was. The verdicts recorded per question are the first
repeat's (the benchmark's own protocol judges once); the repeats only measure agreement:
the unanimity rate (answers whose verdicts all agree, of those with a verdict in every repeat)
and Fleiss' κ with the repeats as raters.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from memeval.llm.client import Batch, Reply
from memeval.record import Consistency

Result = Reply | str | None


def repeat_salt(salt: str, repeat: int) -> str:
    """The cache salt of judging repeat ``repeat`` (1-based): the run's own for the first."""
    return salt if repeat == 1 else f"{salt}|judge-repeat-{repeat}"


def judge_rounds(batch: Batch, jobs: list[dict[str, Any]], salt: str, repeats: int) -> list[list[Result]]:
    """``jobs`` asked ``repeats`` times through ``batch``, each repeat under its own salt."""
    return [batch.run(jobs, salt=repeat_salt(salt, i)) for i in range(1, repeats + 1)]


def rounds_consistency(rounds: Sequence[Sequence[Result]], verdict: Callable[[Result], bool | None]) -> Consistency | None:
    """:func:`consistency` of the verdicts ``verdict`` reads from each job's result in every round."""
    return consistency([[verdict(r[i]) for r in rounds] for i in range(len(rounds[0]) if rounds else 0)])


def consistency(verdicts: Sequence[Sequence[bool | None]]) -> Consistency | None:
    """Agreement over ``verdicts`` (per answer, its verdict in each repeat); None for one repeat."""
    repeats = len(verdicts[0]) if verdicts else 0
    if repeats < 2:
        return None
    full = [tuple(v) for v in verdicts if all(x is not None for x in v)]
    unanimous = sum(1 for v in full if len(set(v)) == 1)
    return Consistency(repeats, unanimous, len(full), fleiss_kappa([[bool(x) for x in v] for v in full]))


def fleiss_kappa(ratings: Sequence[Sequence[bool]]) -> float | None:
    """Fleiss' κ of yes/no ratings (each item rated by the same number of raters, at least two),
    rounded to 4 places; None with no items, or when every rating is the same (chance agreement
    is then 1 and κ undefined)."""
    if not ratings or len(ratings[0]) < 2:
        return None
    raters, items = len(ratings[0]), len(ratings)
    yes = [sum(r) for r in ratings]
    share = sum(yes) / (items * raters)
    chance = share ** 2 + (1 - share) ** 2
    if chance >= 1.0:
        return None
    observed = sum((y * y + (raters - y) ** 2 - raters) / (raters * (raters - 1)) for y in yes) / items
    return round((observed - chance) / (1 - chance), 4)
