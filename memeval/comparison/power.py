"""Whether a comparison could have seen the change it calls noise.

A cell marked ``~`` (within noise) says only that this comparison did not see a move; when the
suite is too small to detect a change of that size anyway, the honest reading is "underpowered",
not "no change". For a rate KPI read off probes, the minimum detectable change at α = 0.05 and
power 0.8 is :func:`memeval.score.power.plan`'s ``mde_pp``, measured on the baseline's runs
(probe-to-probe variance, the intra-cluster correlation over the suite's cluster unit and, with repeats, repeat noise).
"""

from __future__ import annotations

from memeval.comparison.groups import Side
from memeval.score.clusters import clustering
from memeval.score.kpi import ProbeMetric
from memeval.score.power import ProbeOutcome, measure, plan


def min_detectable(side: Side, metric: ProbeMetric) -> float | None:
    """The minimum detectable change, pp, of ``metric`` (a rate) at ``side``'s size and variance;
    None when it cannot be estimated (too few probes, no variance, one scenario)."""
    if metric.kind != "rate":
        return None
    clusters = clustering(side.runs[0].suite.resolved)
    runs = []
    for run in side.runs:
        labels = clusters.labels(run.probes)
        runs.append([ProbeOutcome(key[0], key[1], key[2], bool(v), labels[key])
                     for key, v in metric.outcomes(run.probes).items()])
    return plan(measure(runs, clusters.unit), 1.0).mde_pp
