"""The noise rule: when a KPI's change between two configurations counts as a move.

Each side (baseline, profile) is the mean of its repeat runs. Then:

- ``spread`` of a side = max − min of its repeat values (0 for a single run);
- ``noise`` = max(spread of the baseline, spread of the profile);
- ``floor`` by the KPI's unit (:func:`floor`): a rate or points moves by at least
  max(3 pp, 100/n pp), so one probe flipping never counts; a score by 0.03; a latency by 25% of
  the baseline and at least 5 ms; cost, counts and tokens by 10% of the baseline;
- the change Δ counts only when |Δ| > max(noise, floor) **and**, where a paired test applies
  (:mod:`memeval.comparison.paired`), its p-value is below :data:`ALPHA`.
"""

from __future__ import annotations

ALPHA = 0.05
RATE_FLOOR_PP = 3.0
SCORE_FLOOR = 0.03
LATENCY_SHARE, LATENCY_MIN_MS = 0.25, 5.0
COST_SHARE = 0.10
EPSILON = 2e-4
"""KPI values are rounded to 4 decimals, so a Δ within this of the threshold is at the threshold."""


def spread(values: list[float]) -> float:
    """max − min of the repeat values; 0 for fewer than two."""
    return max(values) - min(values) if len(values) > 1 else 0.0


def floor(unit: str, baseline: float, n: int) -> float:
    """The smallest change (in the KPI's unit) that can count for a KPI of ``unit`` whose
    baseline value is ``baseline`` and whose smallest sample size is ``n`` probes."""
    if unit in ("pct", "points"):
        return max(RATE_FLOOR_PP, 100.0 / n) if n > 0 else RATE_FLOOR_PP
    if unit == "score":
        return SCORE_FLOOR
    if unit == "ms":
        return max(LATENCY_SHARE * abs(baseline), LATENCY_MIN_MS)
    return COST_SHARE * abs(baseline)


def is_move(delta: float, threshold: float, p: float | None) -> bool:
    """Whether a change beyond ``threshold`` (and backed by ``p`` < ALPHA when tested) counts."""
    return abs(delta) > threshold + EPSILON and (p is None or p < ALPHA)
