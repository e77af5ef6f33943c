"""Power: how many probes, clusters or repeats a suite needs to see a change of Δ points.

The model (a normal approximation, two-sided): two configurations are each run on n probes,
and their pass rates compared. Treating the two runs as independent gives

    Var(Δ̂) = 2 · V / n,    V = σ_b² + σ_w² / R + (m − 1) · τ²

per probe, where σ_b² is the spread of the probes' true pass chances, σ_w² the repeat-to-repeat
noise of one probe (measured only with two or more runs of the same suite), R the repeats
averaged per probe, m the mean cluster size and τ² = ρ · s² the variance clusters share
(ρ: the intra-cluster correlation, estimated by one-way ANOVA; at today's R, V = s² · (1 + (m −
1) ρ), the design effect). A change Δ is detected at α with the given power when

    Δ ≥ (z₁₋α/₂ + z_power) · √(2 V / n).

Pairing the same probes removes shared variance, so the figures are conservative for
``memeval compare``'s paired tests. More probes are assumed to come as more clusters of
today's size. Nothing here turns missing data into a number: what cannot be estimated is None
with a reason.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist

from memeval.record import ProbeResult
from memeval.score.clusters import SCENARIO, Clustering
from memeval.util.suggest import plural

ALPHA = 0.05
POWER = 0.8
KPIS = ("pack-hit", "answer")
"""Which verdict :func:`probe_outcomes` reads: ``hit`` (probes that expect an answer) or
``answer_ok`` (the extractive answer, every scored probe)."""
PHASES = ("synthesis", "recall")
"""The phase a plan analyses: each probe counts once, in that phase (the KPIs ``pack hit
(synthesis)`` and ``extractive answer`` read the synthesis phase, so that is the default)."""


@dataclass(frozen=True)
class ProbeOutcome:
    """One probe's verdict in one run; ``verdict`` None when the probe was not scored."""

    scenario: str
    probe: str
    phase: str
    verdict: bool | None
    cluster: str | None = None
    """The probe's cluster (None: its scenario)."""

    @property
    def key(self) -> tuple[str, str, str]:
        """(scenario, probe id, phase): how a probe is matched across runs."""
        return (self.scenario, self.probe, self.phase)


@dataclass(frozen=True)
class Variance:
    """What was measured: ``probes`` with a verdict in every one of ``repeats`` runs (``dropped``
    had none in some run) in ``clusters`` clusters; the pass ``rate``; ``sd`` the standard deviation
    of a probe's mean verdict; ``within`` the repeat-to-repeat variance σ_w² (None with one run);
    ``icc`` ρ (None when it cannot be estimated) and ``design_effect`` 1 + (m − 1) ρ."""

    probes: int
    clusters: int
    repeats: int
    dropped: int
    rate: float | None
    sd: float | None
    within: float | None
    icc: float | None
    design_effect: float | None
    unit: str = "scenario"
    """What a cluster is (the suite's ``cluster:``)."""


@dataclass(frozen=True)
class PowerPlan:
    """Sizes needed to detect ``delta_pp`` percentage points at ``alpha`` with ``power``, and the
    minimum detectable effect ``mde_pp`` at today's size. A None says it cannot be had;
    ``reason`` (for the whole plan) or ``repeats_reason`` says why."""

    variance: Variance
    delta_pp: float
    alpha: float
    power: float
    mde_pp: float | None
    probes_needed: int | None
    clusters_needed: int | None
    repeats_needed: int | None
    reason: str | None
    repeats_reason: str | None


def probe_outcomes(probes: Sequence[ProbeResult], kpi: str = "pack-hit",
                   clusters: Clustering = SCENARIO, phase: str = "synthesis") -> list[ProbeOutcome]:
    """Each probe result of a run in ``phase`` as a :class:`ProbeOutcome` in its cluster by
    ``clusters``: a probe asked in both phases counts once, as the KPI of that phase counts it.
    ``pack-hit`` reads ``hit`` and leaves abstention probes out (they expect no answer in the
    pack); ``answer`` reads ``answer_ok``. Probes whose gold is disputed (errata) are left out;
    those whose ``status`` is not ``scored`` have verdict None. Raises ValueError for an unknown
    kpi or phase."""
    if kpi not in KPIS:
        raise ValueError(f"unknown kpi {kpi!r}; choose one of {', '.join(KPIS)}")
    if phase not in PHASES:
        raise ValueError(f"unknown phase {phase!r}; choose one of {', '.join(PHASES)}")
    out = []
    for probe in probes:
        if (kpi == "pack-hit" and probe.abstain) or probe.disputed or probe.phase != phase:
            continue
        verdict = (probe.hit if kpi == "pack-hit" else probe.answer_ok) if probe.status == "scored" else None
        out.append(ProbeOutcome(probe.scenario, probe.id, probe.phase, None if verdict is None else bool(verdict),
                                clusters.of(probe)))
    return out


def icc(values: Sequence[float], clusters: Sequence[Hashable]) -> float | None:
    """The one-way ANOVA estimate of the intra-cluster correlation, clipped to [0, 1]:
    (MSB − MSW) / (MSB + (m₀ − 1) MSW) with m₀ = (N − Σ mᵢ² / N) / (k − 1). None with fewer
    than two clusters, no within-cluster degrees of freedom, or no variance at all."""
    groups: dict[Hashable, list[float]] = {}
    for value, label in zip(values, clusters, strict=True):
        groups.setdefault(label, []).append(float(value))
    n, k = len(values), len(groups)
    if k < 2 or n - k < 1:
        return None
    grand = sum(values) / n
    between = sum(len(g) * (sum(g) / len(g) - grand) ** 2 for g in groups.values()) / (k - 1)
    within = sum(sum((v - sum(g) / len(g)) ** 2 for v in g) for g in groups.values()) / (n - k)
    m0 = (n - sum(len(g) ** 2 for g in groups.values()) / n) / (k - 1)
    denom = between + (m0 - 1) * within
    if denom <= 0:
        return None
    return min(1.0, max(0.0, (between - within) / denom))


def measure(runs: Sequence[Sequence[ProbeOutcome]], unit: str = "scenario") -> Variance:
    """The variance components of repeated runs of one suite, probes matched by key; a probe
    counts only when every run scored it. Clusters are the outcomes' (``unit`` names them)."""
    per_run = [{o.key: o.verdict for o in run if o.verdict is not None} for run in runs]
    cluster_of = {o.key: o.cluster or o.scenario for run in runs for o in run}
    every = set.intersection(*(set(r) for r in per_run)) if per_run else set()
    keys = sorted(every)
    dropped = len(set().union(*(set(r) for r in per_run)) - every) if per_run else 0
    if not keys:
        return Variance(0, 0, len(runs), dropped, None, None, None, None, None, unit)
    grid = [[float(r[key]) for r in per_run] for key in keys]
    means, labels = [sum(row) / len(row) for row in grid], [cluster_of[key] for key in keys]
    clusters = len(set(labels))
    sd = statistics.stdev(means) if len(keys) > 1 else None
    within = statistics.fmean(statistics.variance(row) for row in grid) if len(runs) > 1 else None
    rho = icc(means, labels)
    size = len(keys) / clusters
    effect = 1.0 if size == 1 else (None if rho is None else 1 + (size - 1) * rho)
    return Variance(len(keys), clusters, len(runs), dropped, statistics.fmean(means), sd, within, rho, effect, unit)


def plan(variance: Variance, delta_pp: float, alpha: float = ALPHA, power: float = POWER) -> PowerPlan:
    """The power plan for detecting ``delta_pp`` points (> 0). Raises ValueError otherwise."""
    if not delta_pp > 0:
        raise ValueError(f"delta must be a positive number of points, got {delta_pp}")
    blank = PowerPlan(variance, delta_pp, alpha, power, None, None, None, None, None, None)
    sd, effect = variance.sd, variance.design_effect
    if variance.probes < 2 or sd is None:
        return replace(blank, reason="fewer than two probes scored in every run")
    if sd == 0:
        return replace(blank, reason="every probe got the same verdict: no variance to plan from")
    if effect is None:
        return replace(blank, reason="the intra-cluster correlation cannot be estimated with one cluster")
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    v = sd * sd * effect
    delta, n, size = delta_pp / 100, variance.probes, variance.probes / variance.clusters
    probes = math.ceil(z * z * 2 * v / (delta * delta))
    repeats, why = _repeats_needed(variance, sd * sd, effect, delta * delta * n / (2 * z * z))
    return PowerPlan(variance, delta_pp, alpha, power, round(100 * z * math.sqrt(2 * v / n), 2), probes,
                     math.ceil(probes / size), repeats, None, why)


def _repeats_needed(variance: Variance, s2: float, effect: float, budget: float) -> tuple[int | None, str | None]:
    """Repeats per probe needed at today's probes: σ_w² / R must fit in what the probe and
    cluster variance leave of the per-probe budget Δ² n / (2 z²)."""
    within = variance.within
    if within is None:
        return None, "needs two or more runs of the suite to measure repeat noise"
    between = max(0.0, s2 - within / variance.repeats)
    room = budget - between - s2 * (effect - 1)  # s² (DE − 1) = (m − 1) τ², shared by a cluster
    if room <= 0:
        return None, "more repeats cannot reach it: probe-to-probe variance alone is too large"
    return max(1, math.ceil(within / room)), None


def render(plan_: PowerPlan, kpi: str, phase: str = "synthesis") -> str:
    """A short text table of the plan, one line per size, naming the phase it analysed."""
    v = plan_.variance
    rate = "–" if v.rate is None else f"{100 * v.rate:.1f}%"
    icc_text = "–" if v.icc is None else f"{v.icc:.3f}"
    effect = "–" if v.design_effect is None else f"{v.design_effect:.2f}"
    lines = [f"power: {kpi} ({phase} phase: each probe once) over {v.repeats} run(s); rate {rate}; ICC {icc_text}; design effect {effect}"
             + (f"; {v.dropped} probe(s) not scored in every run left out" if v.dropped else ""),
             f"to detect {plan_.delta_pp:g} pp at alpha {plan_.alpha:g}, power {plan_.power:g} (two-sided, normal approximation)",
             "",
             f"{'':<24}{'now':>8}{'needed':>10}"]
    for name, now, needed in (("probes", v.probes, plan_.probes_needed),
                              (f"clusters ({plural(v.unit)})", v.clusters, plan_.clusters_needed),
                              ("repeats", v.repeats, plan_.repeats_needed)):
        lines.append(f"{name:<24}{now:>8,}{'–' if needed is None else f'{needed:,}':>10}")
    mde = "–" if plan_.mde_pp is None else f"{plan_.mde_pp:.1f} pp"
    lines.append(f"{'minimum detectable change':<24}{mde:>18}")
    lines += [f"note: {text}" for text in (plan_.reason, plan_.repeats_reason) if text]
    return "\n".join(lines) + "\n"
