"""Uncertainty over the natural unit: cluster bootstrap intervals, a paired clustered test,
repeat churn and judge checks.

Probes that share a conversation, a scenario or a haystack are not independent: one bad
haystack sinks all its questions together. A per-probe interval (Wilson) then claims far more
certainty than the data hold; resampling whole clusters does not. Every function here takes
plain typed inputs (outcomes, cluster labels, seeds) and returns a frozen value; "no data"
stays None with a reason, never 0 or 100%.

Randomness comes only from ``numpy.random.default_rng(seed)``; the seed and the number of
resamples are returned with each result, so the same input and seed give the same interval to
the digit (for a given numpy release).
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from memeval.stats.basic import Rate, mean_ci, wilson

RESAMPLES = 2000
"""Default number of bootstrap resamples (and of Monte Carlo sign flips)."""
SEED = 20240613
"""Default seed: fixed, so reports are reproducible; recorded in every result."""
EXACT_CLUSTERS = 12
"""Up to this many clusters the sign-flip test enumerates all 2^k flips exactly."""
_LEVEL = (0.025, 0.975)
K = TypeVar("K", bound=Hashable)
_TIE = 1e-12  # |T| equal to the observed one up to float noise counts as "at least as extreme"


@dataclass(frozen=True)
class ClusteredEstimate:
    """A rate or mean with its per-observation and its cluster bootstrap 95% intervals.

    ``value`` is k/n for a rate, the mean for a mean (None when n = 0). ``naive`` is the Wilson
    interval for a rate or the normal-approximation interval for a mean (treating observations
    as independent). ``bootstrap`` is the percentile interval of ``resamples`` cluster
    resamples drawn with ``seed``; None when it cannot be had, and then ``reason`` says why.
    Interval ends are fractions (or the mean's units) rounded to 4 places.
    """

    value: float | None
    n: int
    clusters: int
    naive: tuple[float, float] | None
    bootstrap: tuple[float, float] | None
    reason: str | None
    seed: int
    resamples: int


@dataclass(frozen=True)
class ClusterPairedTest:
    """Two runs' per-probe outcomes compared probe by probe, with clusters as the unit.

    ``difference`` is the mean of (other − base) over the ``pairs`` probes both runs scored
    (None for no pairs), ``ci95`` its paired cluster bootstrap interval, ``p`` the two-sided
    sign-flip permutation p-value over ``clusters`` clusters, by ``method`` ``exact`` (all 2^k
    flips) or ``monte-carlo`` (``resamples`` flips drawn with ``seed``). ``reason`` says why
    an interval or p-value is missing.
    """

    difference: float | None
    ci95: tuple[float, float] | None
    p: float | None
    pairs: int
    clusters: int
    method: str
    reason: str | None
    seed: int
    resamples: int


@dataclass(frozen=True)
class Spread:
    """A KPI's spread over repeats: ``n`` repeats that had a value, min, max and the sample
    standard deviation (None below two values)."""

    n: int
    low: float | None
    high: float | None
    sd: float | None


@dataclass(frozen=True)
class Kappa:
    """Cohen's κ between two raters over ``n`` items both rated; ``observed`` and ``expected``
    agreement as fractions. ``kappa`` is None when undefined (no items, or chance agreement is
    1 because both raters gave one and the same verdict throughout); ``reason`` says which."""

    kappa: float | None
    n: int
    observed: float | None
    expected: float | None
    reason: str | None


@dataclass(frozen=True)
class ErrataCeiling:
    """A score with known-bad gold set apart: over every scored item (``all``), over the items
    whose gold is not disputed (``clean``), over the disputed ones (``disputed``), and the
    ``ceiling``: the share of scored items that are not disputed, the most a system answering
    correctly everywhere can score when the disputed gold marks a correct answer wrong."""

    all: Rate
    clean: Rate
    disputed: Rate
    ceiling: Rate


def cluster_rate(outcomes: Sequence[bool | None], clusters: Sequence[Hashable], *,
                 resamples: int = RESAMPLES, seed: int = SEED) -> ClusteredEstimate:
    """A rate over the non-null ``outcomes`` with Wilson and cluster bootstrap intervals;
    ``clusters[i]`` is the cluster of ``outcomes[i]``. Raises ValueError when the lengths
    differ or ``resamples`` < 1."""
    values, labels = _known(outcomes, clusters)
    k = int(sum(values))
    naive = wilson(k, len(values))
    return _estimate(values, labels, naive, resamples, seed)


def cluster_mean(values: Sequence[float | None], clusters: Sequence[Hashable], *,
                 bounds: tuple[float, float] | None = None, resamples: int = RESAMPLES,
                 seed: int = SEED) -> ClusteredEstimate:
    """A mean (MRR, F1) over the non-null ``values`` with a normal-approximation interval
    (clipped to ``bounds``, as :func:`memeval.stats.basic.mean_ci`) and a cluster bootstrap
    interval. Raises ValueError when the lengths differ or ``resamples`` < 1."""
    known, labels = _known(values, clusters)
    _, naive = mean_ci(known, bounds)
    naive = (round(naive[0], 4), round(naive[1], 4)) if naive else None
    return _estimate(known, labels, naive, resamples, seed)


def _known(values: Sequence[float | bool | None], clusters: Sequence[Hashable]) -> tuple[list[float], list[Hashable]]:
    if len(values) != len(clusters):
        raise ValueError(f"{len(values)} outcomes but {len(clusters)} cluster labels")
    pairs = [(float(v), c) for v, c in zip(values, clusters) if v is not None]
    return [v for v, _ in pairs], [c for _, c in pairs]


def _estimate(values: list[float], labels: list[Hashable], naive: tuple[float, float] | None,
              resamples: int, seed: int) -> ClusteredEstimate:
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    sums, sizes = _per_cluster(values, labels)
    value = sum(values) / len(values) if values else None
    bootstrap, reason = _bootstrap(sums, sizes, resamples, seed)
    return ClusteredEstimate(value, len(values), len(sizes), naive, bootstrap, reason, seed, resamples)


def _per_cluster(values: Sequence[float], labels: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster, in the order of the labels' reprs (so a result does not depend on the order
    probes come in): the sum of its values and how many it has."""
    index = {label: i for i, label in enumerate(sorted(set(labels), key=repr))}
    codes = np.fromiter((index[c] for c in labels), dtype=np.intp, count=len(labels))
    sums = np.bincount(codes, weights=np.asarray(values, dtype=float), minlength=len(index))
    sizes = np.bincount(codes, minlength=len(index)).astype(float)
    return sums, sizes


def _bootstrap(sums: np.ndarray, sizes: np.ndarray, resamples: int, seed: int) -> tuple[tuple[float, float] | None, str | None]:
    """Percentile interval of Σsums / Σsizes over clusters resampled with replacement."""
    k = len(sizes)
    if k == 0:
        return None, "no data"
    if k == 1:
        return None, "one cluster: a cluster interval needs at least two"
    picks = np.random.default_rng(seed).integers(0, k, size=(resamples, k))
    stats = sums[picks].sum(axis=1) / sizes[picks].sum(axis=1)
    lo, hi = np.quantile(stats, _LEVEL)
    return (round(float(lo), 4), round(float(hi), 4)), None


def paired_cluster_test(base: Mapping[K, float], other: Mapping[K, float], clusters: Mapping[K, Hashable], *,
                        resamples: int = RESAMPLES,
                        seed: int = SEED) -> ClusterPairedTest:
    """Compare ``other`` with ``base`` on the probes both scored (keys present in both; each
    value a probe's outcome, or its mean over repeats). ``clusters`` maps every such key to its
    cluster. The p-value is the sign-flip test: under "no difference" swapping the two runs
    within a whole cluster changes nothing, so each cluster's summed difference may flip sign;
    p is the share of flips whose |Σ| is at least the observed one. Raises KeyError when a
    paired key has no cluster, ValueError when ``resamples`` < 1."""
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    common = [key for key in base if key in other]
    diffs = [float(other[key]) - float(base[key]) for key in common]
    sums, sizes = _per_cluster(diffs, [clusters[key] for key in common])
    k = len(sizes)
    method = "exact" if k <= EXACT_CLUSTERS else "monte-carlo"
    if not common:
        return ClusterPairedTest(None, None, None, 0, 0, method, "no probes scored by both runs", seed, resamples)
    ci95, reason = _bootstrap(sums, sizes, resamples, seed)
    p = _sign_flip_p(sums, method, resamples, seed)
    return ClusterPairedTest(round(sum(diffs) / len(diffs), 6), ci95, p, len(common), k, method, reason, seed, resamples)


def _sign_flip_p(sums: np.ndarray, method: str, resamples: int, seed: int) -> float:
    k = len(sums)
    if method == "exact":
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=k)))
    else:
        signs = np.random.default_rng(seed).choice((1.0, -1.0), size=(resamples, k))
    observed = abs(float(sums.sum()))
    extreme = int(np.count_nonzero(np.abs(signs @ sums) >= observed - _TIE))
    if method == "exact":
        return round(extreme / len(signs), 6)
    return round((extreme + 1) / (resamples + 1), 6)  # the observed assignment counts once


def flip_rate(repeats: Sequence[Mapping[K, bool | None]]) -> Rate:
    """The share of probes whose verdict is not the same across repeats: k probes flipped of
    n probes with a verdict in at least two repeats (a probe scored once cannot flip, so it is
    not counted). n = 0 (fewer than two repeats) gives a rate whose value is None."""
    verdicts: dict[K, set[bool]] = {}
    seen: dict[K, int] = {}
    for run in repeats:
        for key, verdict in run.items():
            if verdict is not None:
                verdicts.setdefault(key, set()).add(bool(verdict))
                seen[key] = seen.get(key, 0) + 1
    judged = [key for key, count in seen.items() if count >= 2]
    return Rate(sum(1 for key in judged if len(verdicts[key]) > 1), len(judged))


def spread(values: Sequence[float | None]) -> Spread:
    """Min, max and sample standard deviation of a KPI over repeats (None values, repeats
    where the KPI had no data, are left out)."""
    known = [float(v) for v in values if v is not None]
    if not known:
        return Spread(0, None, None, None)
    sd = float(np.std(known, ddof=1)) if len(known) >= 2 else None
    return Spread(len(known), min(known), max(known), None if sd is None else round(sd, 6))


def cohen_kappa(judge: Mapping[K, bool | None], matcher: Mapping[K, bool | None]) -> Kappa:
    """Cohen's κ = (p_o − p_e) / (1 − p_e) between two binary raters over the items both
    rated (non-null in both)."""
    pairs = [(bool(judge[key]), bool(matcher[key])) for key in judge
             if judge[key] is not None and matcher.get(key) is not None]
    n = len(pairs)
    if n == 0:
        return Kappa(None, 0, None, None, "no items rated by both")
    observed = sum(1 for a, b in pairs if a == b) / n
    yes_a = sum(1 for a, _ in pairs if a) / n
    yes_b = sum(1 for _, b in pairs if b) / n
    expected = yes_a * yes_b + (1 - yes_a) * (1 - yes_b)
    if expected == 1:
        return Kappa(None, n, observed, expected, "both raters gave one verdict throughout: κ is undefined")
    return Kappa(round((observed - expected) / (1 - expected), 6), n, observed, expected, None)


def errata_ceiling(outcomes: Mapping[K, bool | None], disputed: AbstractSet[K]) -> ErrataCeiling:
    """Accuracy with and without the items whose gold is ``disputed``, and the ceiling they
    impose. Unscored items (None) count nowhere."""
    scored = {key: bool(v) for key, v in outcomes.items() if v is not None}
    bad = [key for key in scored if key in disputed]
    good = [key for key in scored if key not in disputed]
    return ErrataCeiling(
        all=Rate(sum(scored.values()), len(scored)),
        clean=Rate(sum(scored[key] for key in good), len(good)),
        disputed=Rate(sum(scored[key] for key in bad), len(bad)),
        ceiling=Rate(len(good), len(scored)),
    )
