"""Small, exact statistics: rates with Wilson intervals, percentiles, means, paired tests.

No "no data" ever becomes a number: a rate over n = 0 is None, and so is a percentile of no
samples.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Rate:
    """k successes out of n; ``value`` is None when n = 0."""

    k: int
    n: int

    @property
    def value(self) -> float | None:
        """k / n as a fraction, or None for n = 0."""
        return self.k / self.n if self.n else None

    def wilson(self) -> tuple[float, float] | None:
        """The 95% Wilson score interval, or None for n = 0."""
        return wilson(self.k, self.n)

    def text(self) -> str:
        """``NN% (k/n)``, or ``–`` when n = 0."""
        return "–" if not self.n else f"{round(100 * self.k / self.n)}% ({self.k}/{self.n})"


def rate(flags: list[bool | None]) -> Rate:
    """A rate over the non-null flags."""
    known = [f for f in flags if f is not None]
    return Rate(sum(1 for f in known if f), len(known))


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval for k of n, as fractions rounded to 4 places; None for n = 0."""
    if n == 0:
        return None
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4))


def percentile(samples: list[float], q: float) -> float | None:
    """The sample at index round((n − 1)·q) of the sorted samples; None for no samples."""
    if not samples:
        return None
    ordered = sorted(samples)
    return ordered[int(round((len(ordered) - 1) * q))]


def mean_ci(values: list[float], bounds: tuple[float, float] | None = None) -> tuple[float | None, tuple[float, float] | None]:
    """Mean and a normal-approximation 95% interval (None below two values), clipped to
    ``bounds`` when the values cannot leave them (a reciprocal rank lies in [0, 1])."""
    if not values:
        return None, None
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, None
    var = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    half = Z95 * math.sqrt(var / len(values))
    lo, hi = mean - half, mean + half
    if bounds is not None:
        lo, hi = max(bounds[0], lo), min(bounds[1], hi)
    return mean, (lo, hi)


def binomial_two_sided(k: int, n: int) -> float:
    """Exact two-sided p-value of k successes in n fair coin flips (the sign test and the exact
    McNemar test on discordant pairs); 1.0 for n = 0."""
    if n == 0:
        return 1.0
    tail = min(k, n - k)
    p: float = sum(math.comb(n, i) for i in range(tail + 1)) / 2 ** n
    return min(1.0, 2 * p)


def mcnemar_exact(gained: int, lost: int) -> float:
    """Exact McNemar p-value for paired binary outcomes: ``gained`` pairs went false→true,
    ``lost`` went true→false."""
    return binomial_two_sided(gained, gained + lost)
