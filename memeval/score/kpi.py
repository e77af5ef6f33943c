"""KPIs: one number per question a configuration is chosen on, with unit, better direction,
sample size and a 95% interval where the KPI is a rate or a mean.

Which probes feed which group comes from the YAML (a probe's ``groups``); every probe feeds
accuracy. Rates are read in the synthesis phase unless the name says otherwise. A KPI the run
could not measure has value null (shown as "–"), never 0.
"""

from __future__ import annotations

from typing import Any

from memeval.score.stats import Rate, mean_ci, percentile, rate

UP, DOWN = "up", "down"


def kpi(group: str, name: str, value: float | None, unit: str, better: str | None, n: int,
        ci95: tuple[float, float] | list[float] | None = None) -> dict[str, Any]:
    """One KPI record."""
    return {"group": group, "name": name, "value": None if value is None else round(value, 4), "unit": unit,
            "better": better, "n": n, "ci95": None if ci95 is None else [round(c, 4) for c in ci95]}


def rate_kpi(group: str, name: str, r: Rate, better: str = UP) -> dict[str, Any]:
    """A percentage KPI from a rate (value and interval in percent)."""
    ci = r.wilson()
    return kpi(group, name, None if r.value is None else 100 * r.value, "pct", better, r.n,
               None if ci is None else (100 * ci[0], 100 * ci[1]))


def compute_kpis(probes: list[dict[str, Any]], scenarios: list[dict[str, Any]], timings: dict[str, list[float]],
                 usage: dict[str, Any] | None, answerer: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Every KPI of a run from its probe records, scenario records, timings and usage."""
    scored = [p for p in probes if p["status"] == "scored"]
    syn = [p for p in scored if p["phase"] == "synthesis"]
    rec = [p for p in scored if p["phase"] == "recall"]
    out = _accuracy(rec, syn, scored)
    out += _groups(syn, rec)
    out += _engine(scenarios)
    out += _cost(scored, usage, answerer)
    out += _latency(timings)
    return out


def _ranked(ps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in ps if not p["abstain"]]


def _in(ps: list[dict[str, Any]], group: str) -> list[dict[str, Any]]:
    return [p for p in ps if group in p["groups"]]


def _mrr(ps: list[dict[str, Any]], group: str) -> dict[str, Any]:
    values = [p["rr"] for p in _ranked(ps) if p["rr"] is not None]
    mean, ci = mean_ci(values)
    return kpi(group, "MRR" if group == "accuracy" else f"{group} MRR", mean, "score", UP, len(values), ci)


def _accuracy(rec: list[dict[str, Any]], syn: list[dict[str, Any]], both: list[dict[str, Any]]) -> list[dict[str, Any]]:
    leak_checked = [p for p in both if p["leak_checked"]]
    return [
        rate_kpi("accuracy", "pack hit (recall)", rate([p["hit"] for p in _ranked(rec)])),
        rate_kpi("accuracy", "pack hit", rate([p["hit"] for p in _ranked(syn)])),
        _mrr(syn, "accuracy"),
        rate_kpi("accuracy", "extractive answer", rate([p["answer_ok"] for p in syn])),
        rate_kpi("accuracy", "model answer", rate([p["llm_ok"] for p in syn])),
        rate_kpi("accuracy", "captured", rate([p["captured"] for p in syn])),
        kpi("accuracy", "leaks", sum(1 for p in leak_checked if p["leak"]) if leak_checked else None, "count", DOWN,
            len(leak_checked)),
    ]


def _groups(syn: list[dict[str, Any]], rec: list[dict[str, Any]]) -> list[dict[str, Any]]:
    learning, surprise, conflicts = _in(syn, "learning"), _in(syn, "surprise"), _in(syn, "conflicts")
    hit_syn, hit_rec = rate([p["hit"] for p in _ranked(syn)]), rate([p["hit"] for p in _ranked(rec)])
    gain = None if hit_syn.value is None or hit_rec.value is None else 100 * (hit_syn.value - hit_rec.value)
    forgetting, abstention = _in(syn + rec, "forgetting"), _in(syn, "abstention")
    return [
        rate_kpi("learning", "lesson in pack", rate([p["hit"] for p in _ranked(learning)])),
        rate_kpi("learning", "lesson answered", rate([p["llm_ok"] for p in learning])),
        rate_kpi("learning", "lesson captured", rate([p["captured"] for p in learning])),
        kpi("learning", "synthesis gain", gain, "points", UP, min(hit_syn.n, hit_rec.n)),
        rate_kpi("surprise", "surprise in pack", rate([p["hit"] for p in _ranked(surprise)])),
        _mrr(surprise, "surprise"),
        rate_kpi("surprise", "surprise answered", rate([p["llm_ok"] for p in surprise])),
        rate_kpi("conflicts", "disagreement in pack", rate([p["hit"] for p in _ranked(conflicts)])),
        rate_kpi("conflicts", "fresh first", rate([p["fresh_first"] for p in syn])),
        rate_kpi("freshness", "current value in pack", rate([p["hit"] for p in _ranked(_in(syn, "freshness"))])),
        rate_kpi("freshness", "current value answered", rate([p["answer_ok"] for p in _in(syn, "freshness")])),
        rate_kpi("leaks", "leak-free packs", rate([not p["leak"] for p in _in(syn + rec, "leaks") if p["leak_checked"]])),
        rate_kpi("abstention", "pack invents nothing", rate([not p["invented"] for p in abstention if p["invented"] is not None])),
        rate_kpi("abstention", "model abstains", rate([p["llm_ok"] for p in abstention])),
        rate_kpi("forgetting", "residue", rate([_residue(p) for p in forgetting]), DOWN),
    ]


def _residue(p: dict[str, Any]) -> bool | None:
    """Whether a forgetting probe's pack still holds a forgotten string (None: not checked)."""
    if p["abstain"]:
        return p["invented"]
    return p["leak"] if p["leak_checked"] else None


def _engine(scenarios: list[dict[str, Any]]) -> list[dict[str, Any]]:
    syn = [s.get("synthesis", {}) for s in scenarios]
    built = [s["built"] for s in syn if s.get("built") is not None]
    derived = [t for s in syn if s.get("derived") for t in s["derived"].values()]
    inspected = bool(derived)
    conflicts = sum(len(t["conflicts"]) for t in derived)
    confidences = [c for t in derived for c in t["confidences"]]
    mean_conf, ci = mean_ci(confidences)
    return [
        kpi("learning", "beliefs built", sum(built) if built else None, "count", None, len(built)),
        kpi("learning", "beliefs held", sum(len(t["beliefs"]) for t in derived) if inspected else None, "count", None, len(derived)),
        kpi("learning", "facts held", sum(len(t["facts"]) for t in derived) if inspected else None, "count", None, len(derived)),
        kpi("learning", "belief confidence", mean_conf, "score", None, len(confidences), ci),
        kpi("conflicts", "conflicts raised", conflicts if inspected else None, "count", None, len(derived)),
    ]


def _cost(scored: list[dict[str, Any]], usage: dict[str, Any] | None, answerer: dict[str, Any] | None) -> list[dict[str, Any]]:
    tokens = [p["tokens"] for p in scored if p["tokens"] is not None]
    mean, ci = mean_ci([float(t) for t in tokens])
    usage = usage or {}
    answerer = answerer or {}
    return [
        kpi("cost", "pack tokens (mean)", mean, "tokens", DOWN, len(tokens), ci),
        kpi("cost", "engine models $", usage.get("cost_usd"), "usd", DOWN, usage.get("calls", 0)),
        kpi("cost", "engine model tokens", usage.get("tokens") if usage else None, "tokens", DOWN, usage.get("calls", 0)),
        kpi("cost", "answerer $", answerer.get("cost_usd"), "usd", DOWN, answerer.get("calls", 0)),
        kpi("cost", "answerer tokens", answerer.get("tokens"), "tokens", DOWN, answerer.get("calls", 0)),
    ]


def _latency(timings: dict[str, list[float]]) -> list[dict[str, Any]]:
    pre = [v for k, vs in timings.items() if k.startswith("pre_turn") for v in vs]
    probe = [v for k, vs in timings.items() if k.startswith("probe ") for v in vs]
    drain = timings.get("enrichment (queue drained)", [])
    builds = timings.get("synthesis (all builds)", [])
    out = [kpi("latency", f"pre_turn {n}", percentile(pre, q), "ms", DOWN, len(pre)) for n, q in (("p50", .5), ("p95", .95), ("p99", .99))]
    out += [kpi("latency", f"probe {n}", percentile(probe, q), "ms", DOWN, len(probe)) for n, q in (("p50", .5), ("p95", .95))]
    out.append(kpi("latency", "enrichment drain", sum(drain) if drain else None, "ms", DOWN, len(drain)))
    out.append(kpi("latency", "belief builds", sum(builds) if builds else None, "ms", DOWN, len(builds)))
    return out
