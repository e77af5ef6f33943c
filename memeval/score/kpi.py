"""KPIs: one number per question a configuration is chosen on, with unit, better direction,
sample size and a 95% interval where the KPI is a rate or a mean.

Which probes feed which group comes from the YAML (a probe's ``groups``); every probe feeds
accuracy. Rates are read in the synthesis phase unless the name says otherwise. A KPI the run
could not measure has value null (shown as "–"), never 0: engine-side KPIs (derived layers,
model usage, enrichment) are null on an engine without the capability, answerer KPIs without
``--llm``, and a percentile is null below the sample count that gives it meaning (p95 needs
20 samples, p99 100).

The KPIs read off single probe records are declared once in :data:`PROBE_METRICS`, so that
:mod:`memeval.compare` can pair two runs probe by probe for exactly the outcomes the KPI counts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from memeval.record import (KPI_GROUPS, PHASES, Answerer, Better, ClusterInterval, Kpi, KpiGroup, Phase, ProbeResult, ScenarioResult,
                            TenantDerived, TimingLabel, Unit, Usage)
from memeval.stats.clustered import cluster_mean
from memeval.score.clusters import SCENARIO, Clustering
from memeval.score.match import holds_all
from memeval.stats.basic import Rate, mean_ci, rate
from memeval.score.totals import invents_nothing, measured_percentile

UP: Better = "up"
DOWN: Better = "down"
GROUPS = KPI_GROUPS

Key = tuple[str, str, str]
"""A probe outcome's identity across runs: (scenario, probe id, phase)."""
Probes = Sequence[ProbeResult]


def kpi(group: KpiGroup, name: str, value: float | None, unit: Unit, better: Better | None, n: int,
        ci95: tuple[float, float] | None = None) -> Kpi:
    """One KPI, value and interval rounded to 4 places."""
    return Kpi(group, name, None if value is None else round(value, 4), unit, better, n,
               None if ci95 is None else (round(ci95[0], 4), round(ci95[1], 4)))


def rate_kpi(group: KpiGroup, name: str, r: Rate, better: Better | None = UP) -> Kpi:
    """A percentage KPI from a rate (value and interval in percent)."""
    ci = r.wilson()
    return kpi(group, name, None if r.value is None else 100 * r.value, "pct", better, r.n,
               None if ci is None else (100 * ci[0], 100 * ci[1]))


@dataclass(frozen=True)
class ProbeMetric:
    """A KPI computed from one outcome per scored probe record.

    ``read`` gives a probe's outcome (bool for ``rate`` and ``count``, a number for ``mean``)
    or None when the probe does not count. Only probes in ``phases``, feeding ``feeds`` (when
    set) and, with ``ranked``, not abstention probes are read. ``kind``: ``rate`` (percent of
    true outcomes, Wilson interval), ``mean`` (a score, normal interval) or ``count`` (number of
    true outcomes).
    """

    group: KpiGroup
    name: str
    kind: Literal["rate", "mean", "count"]
    read: Callable[[ProbeResult], bool | float | None]
    phases: tuple[Phase, ...] = ("synthesis",)
    feeds: str | None = None
    ranked: bool = False
    better: Better | None = UP

    def outcomes(self, probes: Probes) -> dict[Key, bool | float]:
        """Each counted probe's outcome by (scenario, probe id, phase); a probe whose gold the
        suite's errata dispute never counts (:mod:`memeval.score.errata`)."""
        out: dict[Key, bool | float] = {}
        for p in probes:
            if not p.scored or p.disputed or p.phase not in self.phases:  # disputed gold is scored apart
                continue
            if (self.feeds and self.feeds not in p.groups) or (self.ranked and p.abstain):
                continue
            value = self.read(p)
            if value is not None:
                out[p.key] = value
        return out

    def compute(self, probes: Probes, clusters: Clustering = SCENARIO) -> Kpi:
        """The KPI over ``probes``; a rate or mean also gets its cluster bootstrap interval over
        ``clusters`` (:func:`cluster_interval`)."""
        outcomes = self.outcomes(probes)
        values = list(outcomes.values())
        if self.kind == "rate":
            one = rate_kpi(self.group, self.name, rate([bool(v) for v in values]), self.better)
            return replace(one, clustered=cluster_interval(outcomes, 100.0, probes, clusters)) if values else one
        if self.kind == "mean":
            mean, ci = mean_ci([float(v) for v in values], bounds=(0.0, 1.0))
            one = kpi(self.group, self.name, mean, "score", self.better, len(values), ci)
            return replace(one, clustered=cluster_interval(outcomes, 1.0, probes, clusters)) if values else one
        return kpi(self.group, self.name, sum(1 for v in values if v) if values else None, "count", self.better,
                   len(values))


def cluster_interval(outcomes: dict[Key, bool | float], scale: float, probes: Probes,
                     clusters: Clustering = SCENARIO) -> ClusterInterval:
    """The cluster bootstrap interval of ``outcomes`` (read off ``probes``) with clusters by
    ``clusters``' unit (fixed seed, so the same run gives the same interval), its ends times ``scale``."""
    labels = clusters.labels(probes)
    est = cluster_mean([float(v) for v in outcomes.values()], [labels[key] for key in outcomes])
    ci = None if est.bootstrap is None else (round(scale * est.bootstrap[0], 4), round(scale * est.bootstrap[1], 4))
    return ClusterInterval(clusters.unit, est.clusters, ci, est.reason, est.seed, est.resamples)


def _leak(p: ProbeResult) -> bool | None:
    return p.leak if p.leak_checked else None


def _no_leak(p: ProbeResult) -> bool | None:
    return None if not p.leak_checked else not p.leak


def _residue(p: ProbeResult) -> bool | None:
    """Whether a forgetting probe's pack still holds a forgotten string (None: not checked)."""
    return p.invented if p.abstain else _leak(p)


BOTH: tuple[Phase, ...] = PHASES
PROBE_METRICS: tuple[ProbeMetric, ...] = (
    ProbeMetric("accuracy", "pack hit (recall)", "rate", lambda p: p.hit, ("recall",), ranked=True),
    ProbeMetric("accuracy", "pack hit (synthesis)", "rate", lambda p: p.hit, ranked=True),
    ProbeMetric("accuracy", "MRR", "mean", lambda p: p.rr, ranked=True),
    ProbeMetric("accuracy", "extractive answer", "rate", lambda p: p.answer_ok),
    ProbeMetric("accuracy", "model answer", "rate", lambda p: p.llm_ok),
    ProbeMetric("accuracy", "captured", "rate", lambda p: p.captured),
    ProbeMetric("accuracy", "leaks", "count", _leak, BOTH, better=DOWN),
    ProbeMetric("learning", "lesson in pack", "rate", lambda p: p.hit, feeds="learning", ranked=True),
    ProbeMetric("learning", "lesson answered", "rate", lambda p: p.llm_ok, feeds="learning"),
    ProbeMetric("learning", "lesson captured", "rate", lambda p: p.captured, feeds="learning"),
    ProbeMetric("surprise", "surprise in pack", "rate", lambda p: p.hit, feeds="surprise", ranked=True),
    ProbeMetric("surprise", "surprise MRR", "mean", lambda p: p.rr, feeds="surprise", ranked=True),
    ProbeMetric("surprise", "surprise answered", "rate", lambda p: p.llm_ok, feeds="surprise"),
    ProbeMetric("conflicts", "disagreement in pack", "rate", lambda p: p.hit, feeds="conflicts", ranked=True),
    ProbeMetric("conflicts", "fresh first", "rate", lambda p: p.fresh_first),
    ProbeMetric("freshness", "current value in pack", "rate", lambda p: p.hit, feeds="freshness", ranked=True),
    ProbeMetric("freshness", "current value answered", "rate", lambda p: p.answer_ok, feeds="freshness"),
    ProbeMetric("leaks", "leak-free packs", "rate", _no_leak, BOTH, feeds="leaks"),
    ProbeMetric("abstention", "pack invents nothing", "rate", invents_nothing),
    ProbeMetric("abstention", "model abstains", "rate", lambda p: p.llm_ok, feeds="abstention"),
    ProbeMetric("forgetting", "residue", "rate", _residue, BOTH, feeds="forgetting", better=DOWN),
)
METRICS_BY_NAME = {(m.group, m.name): m for m in PROBE_METRICS}
HEADLINE = ("pack hit (synthesis)", "extractive answer", "model answer")
"""The headline accuracy KPIs (group ``accuracy``): the rates reported with disputed gold apart
(:mod:`memeval.score.errata`) and whose per-probe churn ``run --repeat`` counts."""


def compute_kpis(probes: Probes, scenarios: Sequence[ScenarioResult], timings: dict[TimingLabel, tuple[float, ...]],
                 usage: Usage | None, answerer: Answerer | None, clusters: Clustering = SCENARIO) -> tuple[Kpi, ...]:
    """Every KPI of a run from its probe results, scenario results, timings and usage, ordered
    by :data:`GROUPS`; cluster intervals over ``clusters``' unit."""
    out = [m.compute(probes, clusters) for m in PROBE_METRICS]
    out.append(_gain(probes))
    out += _derived(probes, scenarios)
    out += _cost(probes, usage, answerer)
    out += _latency(timings)
    return tuple(sorted(out, key=lambda k: GROUPS.index(k.group)))


def _gain(probes: Probes) -> Kpi:
    """Synthesis gain: pack-hit % after synthesis minus before, in points."""
    syn = METRICS_BY_NAME[("accuracy", "pack hit (synthesis)")].outcomes(probes)
    rec = METRICS_BY_NAME[("accuracy", "pack hit (recall)")].outcomes(probes)
    hit_syn, hit_rec = rate([bool(v) for v in syn.values()]), rate([bool(v) for v in rec.values()])
    gain = None if hit_syn.value is None or hit_rec.value is None else 100 * (hit_syn.value - hit_rec.value)
    return kpi("learning", "synthesis gain", gain, "points", UP, min(hit_syn.n, hit_rec.n))


def _derived(probes: Probes, scenarios: Sequence[ScenarioResult]) -> list[Kpi]:
    """KPIs over what the engine built and holds (beliefs, facts, conflicts); null unless the
    engine builds (``built``) or can be inspected (``derived``)."""
    syn = [s.synthesis for s in scenarios]
    built = [s.builds.built for s in syn if s.builds is not None and s.builds.built is not None]
    tenants = [t for s in syn if s.derived for t in s.derived.values()]
    inspected = bool(tenants)

    def total(count: Callable[[TenantDerived], int]) -> int | None:
        return sum(count(t) for t in tenants) if inspected else None

    confidences = [c for t in tenants for c in t.confidences]
    mean_conf, ci = mean_ci(confidences)
    return [
        kpi("learning", "beliefs built", sum(built) if built else None, "count", None, len(built)),
        kpi("learning", "beliefs held", total(lambda t: len(t.beliefs)), "count", None, len(tenants)),
        kpi("learning", "beliefs not supported",
            total(lambda t: sum(n for s, n in t.stances.items() if s != "supported")), "count", None, len(tenants)),
        kpi("learning", "facts held", total(lambda t: len(t.facts)), "count", None, len(tenants)),
        kpi("learning", "belief confidence", mean_conf, "score", None, len(confidences), ci),
        *_conflicts(probes, scenarios),
    ]


def _conflict_lines(scenarios: Sequence[ScenarioResult]) -> dict[str, list[str]]:
    """Per scenario whose conflicts were inspected (every tenant's), the conflicts raised."""
    out = {}
    for s in scenarios:
        derived = s.synthesis.derived
        if derived and all(t.conflicts is not None for t in derived.values()):
            out[s.id] = [c for t in derived.values() for c in t.conflicts or ()]
    return out


def _conflicts(probes: Probes, scenarios: Sequence[ScenarioResult]) -> list[Kpi]:
    """Planted conflicts flagged, spurious conflicts and conflicts raised.

    A planted conflict is a ``conflicts`` probe with ``expect`` words: it is flagged when its
    words (or one ``accept`` alternative) appear in one conflict raised in its scenario. A
    conflict raised in a scenario none of whose probes feed ``conflicts`` or ``freshness`` is
    spurious. Only scenarios whose conflicts were inspected count (engines with the
    ``conflicts`` capability); elsewhere these KPIs are null.
    """
    lines = _conflict_lines(scenarios)
    planted: dict[tuple[str, str], bool] = {}
    for p in probes:
        if p.scenario in lines and "conflicts" in p.groups and p.expect:
            planted[(p.scenario, p.id)] = any(_flags(line, p) for line in lines[p.scenario])
    feeding = {p.scenario for p in probes if {"conflicts", "freshness"} & set(p.groups)}
    outside = [len(found) for sid, found in lines.items() if sid not in feeding]
    return [
        rate_kpi("conflicts", "planted conflicts flagged", rate(list(planted.values()))),
        kpi("conflicts", "spurious conflicts", sum(outside) if outside else None, "count", DOWN, len(outside)),
        kpi("conflicts", "conflicts raised", sum(len(f) for f in lines.values()) if lines else None, "count", None,
            len(lines)),
    ]


def _flags(line: str, p: ProbeResult) -> bool:
    return holds_all(line, p.expect, p.match) or any(holds_all(line, a, p.match) for a in p.accept)


def _cost(probes: Probes, usage: Usage | None, answerer: Answerer | None) -> list[Kpi]:
    """Pack tokens, the engine's model usage (total and by role), the answerer's, and the cost
    per correct answer = (engine $ + answerer $) ÷ correct answers over both phases (model-graded
    when any probe was, else extractive); null without an engine price or with no correct answer."""
    scored = [p for p in probes if p.scored]
    tokens = [float(p.tokens) for p in scored if p.tokens is not None]
    mean, ci = mean_ci(tokens)
    calls = usage.calls if usage else 0
    engine_usd = usage.cost_usd if usage else None
    out = [
        kpi("cost", "pack tokens (mean)", mean, "tokens", DOWN, len(tokens), ci),
        kpi("cost", "engine models $", engine_usd, "usd", DOWN, calls),
        kpi("cost", "engine model calls", usage.calls if usage else None, "count", DOWN, calls),
        kpi("cost", "engine model tokens", usage.tokens if usage else None, "tokens", DOWN, calls),
    ]
    roles = sorted(usage.by_role.items()) if usage else []
    out += [kpi("cost", f"engine $: {role}", cost, "usd", DOWN, calls) for role, cost in roles]
    answerer_calls = answerer.calls if answerer else 0
    out += [
        kpi("cost", "answerer $", answerer.cost_usd if answerer else None, "usd", DOWN, answerer_calls),
        kpi("cost", "answerer tokens", answerer.tokens if answerer else None, "tokens", DOWN, answerer_calls),
        _per_correct(scored, engine_usd, answerer.cost_usd if answerer else 0.0),
    ]
    return out


def _per_correct(scored: list[ProbeResult], engine_usd: float | None, answerer_usd: float | None) -> Kpi:
    by_model = any(p.llm_ok is not None for p in scored)
    correct = sum(1 for p in scored if (p.llm_ok if by_model else p.answer_ok))
    value = (engine_usd + answerer_usd) / correct if engine_usd is not None and answerer_usd is not None and correct > 0 \
        else None
    return kpi("cost", "per correct answer", value, "usd", DOWN, correct)


def _percentile_kpi(name: str, samples: list[float], label: str, q: float) -> Kpi:
    """A latency percentile, as the latency table shows it (:func:`measured_percentile`)."""
    return kpi("latency", f"{name} {label}", measured_percentile(samples, q), "ms", DOWN, len(samples))


def _latency(timings: dict[TimingLabel, tuple[float, ...]]) -> list[Kpi]:
    pre = [v for k, vs in timings.items() if k.is_pre_turn for v in vs]
    probe = [v for k, vs in timings.items() if k.is_probe for v in vs]
    drain = timings.get(TimingLabel.DRAIN, ())
    builds = timings.get(TimingLabel.BUILDS, ())
    out = [_percentile_kpi(name, samples, label, q) for name, samples in (("pre_turn", pre), ("probe", probe))
           for label, q in (("p50", .5), ("p95", .95), ("p99", .99))]
    out.append(kpi("latency", "enrichment drain", sum(drain) if drain else None, "ms", DOWN, len(drain)))
    out.append(kpi("latency", "belief builds", sum(builds) if builds else None, "ms", DOWN, len(builds)))
    return out
