"""Paired tests on probe-level outcomes, and the probes that flipped.

A KPI declared in :data:`memeval.score.kpi.PROBE_METRICS` is read off one outcome per probe,
so two configurations can be compared probe by probe: outcomes are matched by
(scenario, probe id, phase). Repeats are pooled per probe: each side's *share* of a probe is
the mean of its outcome over that side's repeats (1/0 for a pass/fail, the reciprocal rank for
MRR). A probe is *gained* when the profile's share is higher than the baseline's, *lost* when
lower. The p-value is the exact two-sided binomial test of gained against lost
(:func:`memeval.stats.basic.mcnemar_exact`): with one run per side this is exactly McNemar's
test on the discordant pairs, and with repeats it is a sign test with one vote per probe, so
repeats sharpen each probe's vote without being counted as extra independent probes.

Probes of one scenario share a haystack and are not independent, so where the paired probes
come from enough clusters (scenarios, or the unit the suite's ``cluster:`` names) the p-value is
the clustered counterpart instead
(:func:`memeval.stats.clustered.paired_cluster_test`: a sign-flip test over whole clusters,
exact up to 12 scenarios, seeded Monte Carlo beyond); ``method`` says which test gave it.
"Enough" is :data:`MIN_CLUSTERS`: with k scenarios the smallest sign-flip p-value is 2/2^k, so
below 6 the clustered test could never reach α = 0.05 and McNemar's is kept (the cell still
records how many scenarios the pairs came from).
"""

from __future__ import annotations

from dataclasses import dataclass

from memeval.comparison.groups import Side
from memeval.record import JsonObject
from memeval.stats.clustered import paired_cluster_test
from memeval.score.clusters import clustering
from memeval.score.kpi import PROBE_METRICS, Key, ProbeMetric
from memeval.stats.basic import mcnemar_exact

MIN_CLUSTERS = 6
"""Fewest scenarios for which the clustered test is used (2/2^6 < 0.05 ≤ 2/2^5)."""
FLIP_METRICS = tuple(m for m in PROBE_METRICS if m.group == "accuracy" and m.kind == "rate")
"""The outcomes the flipped-probes table lists: pack hit (both phases), answers, captured."""


@dataclass(frozen=True)
class PairedTest:
    """The outcome of a paired test: probes gained and lost, probes paired, the scenarios they
    come from, the p-value and the test that gave it (``mcnemar`` or ``cluster sign-flip``)."""

    gained: int
    lost: int
    pairs: int
    p: float
    clusters: int = 1
    method: str = "mcnemar"


def shares(side: Side, metric: ProbeMetric) -> dict[Key, tuple[float, int]]:
    """Per probe: (mean outcome over the side's repeats that scored it, how many did)."""
    sums: dict[Key, list[float]] = {}
    for run in side.runs:
        for key, value in metric.outcomes(run.probes).items():
            sums.setdefault(key, []).append(float(value))
    return {key: (sum(vs) / len(vs), len(vs)) for key, vs in sums.items()}


def paired_test(base: Side, other: Side, metric: ProbeMetric) -> PairedTest:
    """The paired test of ``other`` against ``base`` on ``metric``'s probe outcomes, clusters by
    the unit the baseline's suite declares (:mod:`memeval.score.clusters`)."""
    a, b = shares(base, metric), shares(other, metric)
    common = [k for k in a if k in b]
    gained = sum(1 for k in common if b[k][0] > a[k][0])
    lost = sum(1 for k in common if b[k][0] < a[k][0])
    unit = clustering(base.runs[0].suite.resolved)
    of = {k: label for run in (*base.runs, *other.runs) for k, label in unit.labels(run.probes).items() if k in b and k in a}
    clusters = len(set(of.values()))
    if clusters < MIN_CLUSTERS:
        return PairedTest(gained, lost, len(common), mcnemar_exact(gained, lost), clusters)
    test = paired_cluster_test({k: a[k][0] for k in common}, {k: b[k][0] for k in common}, of)
    assert test.p is not None  # common is not empty: two clusters have probes
    return PairedTest(gained, lost, len(common), test.p, clusters, "cluster sign-flip")


def flips(base: Side, other: Side) -> list[JsonObject]:
    """Every probe outcome of :data:`FLIP_METRICS` whose share differs between the sides:
    ``{kpi, scenario, probe, phase, before, after, change}`` with the baseline's (before) and
    the profile's (after) shares as ``k/r`` (passes over repeats) and change ``gained`` or
    ``lost``; in probe order per KPI."""
    out: list[JsonObject] = []
    for metric in FLIP_METRICS:
        a, b = shares(base, metric), shares(other, metric)
        for key in a:
            if key in b and a[key][0] != b[key][0]:
                out.append({"kpi": metric.name, "scenario": key[0], "probe": key[1], "phase": key[2],
                            "before": _share_text(a[key]), "after": _share_text(b[key]),
                            "change": "gained" if b[key][0] > a[key][0] else "lost"})
    return out


def _share_text(share: tuple[float, int]) -> str:
    mean, runs = share
    return f"{round(mean * runs)}/{runs}"
