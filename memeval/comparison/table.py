"""Building the comparison: every KPI of every side against the baseline, as plain JSON data.

The result (what ``--json`` and a sweep's ``summary.json`` hold)::

    {"baseline": name, "alpha": 0.05,
     "profiles": [{name, runs, labels, flags_changed, setup_diff}],
     "kpis": [{group, name, unit, better, paired,
               cells: [{profile, value, runs, n, spread, delta, threshold, p, gained, lost, mark, setup_diff,
                       test, clusters, mde_pp, underpowered, unsupported, calls, ci95_delta, needs}]}],
     "moved": {profile: [{group, name, baseline, value, delta, p, mark}]},
     "flips": {profile: [{kpi, scenario, probe, phase, before, after, change}]}}

``value`` is the mean over the side's repeats (null when no run measured it), ``delta`` the
profile minus the baseline in the KPI's unit, ``threshold`` max(noise, floor) (see
:mod:`memeval.comparison.noise`), ``p`` the paired test's p-value where one applies (``test``: ``mcnemar``, or ``cluster sign-flip``
over ``clusters`` scenarios when there are six or more; see :mod:`memeval.comparison.paired`),
and ``mark`` one of ``▲`` (better), ``▼`` (worse), ``Δ`` (changed, no better direction), ``~``
(within noise), ``?`` (needs repeats: a latency tail too thin to test), or null (the baseline, or
nothing to compare). A latency KPI is tested on the per-call samples of both sides
(:mod:`memeval.comparison.latency`): ``p`` is the clustered bootstrap p-value of the difference,
``ci95_delta`` its interval (ms), ``calls`` the samples of [baseline, side], ``clusters`` the
fewer clusters of the two, and ``needs`` why it was not tested (then ``mark`` is ``?``). ``setup_diff`` lists the allowed
scoring setup differences of the side from the baseline (``--allow-setup-diff``; see
:mod:`memeval.comparison.setup`): every cell of the side carries them. For a ``~`` cell of a rate
read off probes with a non-zero Δ, ``mde_pp`` is the minimum detectable change at the
baseline's size (:mod:`memeval.comparison.power`) and ``underpowered`` whether |Δ| is below it
(the comparison could not have seen a change that size); both null otherwise. ``unsupported``
names the capability the side's engine lacks for a KPI that therefore does not exist for it
(value null, never compared; see :mod:`memeval.score.unsupported`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import memeval.comparison.noise as noise
from memeval.comparison.groups import Side, flags_changed
from memeval.comparison.latency import latency_test
from memeval.comparison.paired import flips, paired_test
from memeval.comparison.power import min_detectable
from memeval.comparison.setup import SUBJECT, labels
from memeval.record import Better, Json, JsonObject, KpiGroup, Unit
from memeval.score.kpi import GROUPS, METRICS_BY_NAME, ProbeMetric

Comparison = JsonObject
"""The comparison as the module docstring shows it: JSON data, what ``--json`` and summary.json hold."""
BETTER, WORSE, CHANGED, WITHIN, NEEDS = "▲", "▼", "Δ", "~", "?"


@dataclass(frozen=True)
class Summary:
    """One KPI over one side's repeats: the mean, the values, the smallest n, the spread, and the
    capability the engine lacks when the KPI does not exist for it."""

    value: float | None
    values: tuple[float, ...]
    n: int
    spread: float
    unsupported: str | None = None


@dataclass(frozen=True)
class KpiMeta:
    """What identifies a KPI across runs and how it is read: group, name, unit, better direction."""

    group: KpiGroup
    name: str
    unit: Unit
    better: Better | None

    def to_json(self) -> JsonObject:
        """``{group, name, unit, better}``."""
        return {"group": self.group, "name": self.name, "unit": self.unit, "better": self.better}


def summarise(side: Side, group: str, name: str) -> Summary:
    """The KPI (group, name) averaged over the side's runs that measured it."""
    found = [k for run in side.runs for k in run.kpis if k.group == group and k.name == name]
    missing = next((k.unsupported for k in found if k.unsupported), None)
    if missing:  # a KPI the engine cannot have is no number, in any repeat
        return Summary(None, (), 0, 0.0, missing)
    values = tuple(float(k.value) for k in found if k.value is not None)
    mean = round(sum(values) / len(values), 4) if values else None
    n = min((k.n for k in found if k.value is not None), default=0)
    return Summary(mean, values, n, round(noise.spread(list(values)), 4))


def kpi_index(sides: list[Side]) -> list[KpiMeta]:
    """Every KPI any run reports, in group order then first appearance."""
    seen: dict[tuple[str, str], KpiMeta] = {}
    for side in sides:
        for run in side.runs:
            for k in run.kpis:
                seen.setdefault((k.group, k.name), KpiMeta(k.group, k.name, k.unit, k.better))
    return sorted(seen.values(), key=lambda k: GROUPS.index(k.group))


def cell(meta: KpiMeta, base: Side, side: Side, ref: Summary, mde_of: Callable[[ProbeMetric], float | None]) -> JsonObject:
    """One side's cell for one KPI, judged against the baseline by the noise rule (no judgement
    for the baseline itself). ``ref`` is the baseline's summary of the KPI and ``mde_of`` its
    minimum detectable change, both the same for every side, so computed once per KPI."""
    own = summarise(side, meta.group, meta.name)
    out: JsonObject = {"profile": side.name, "value": own.value, "runs": len(own.values), "n": own.n,
                   "spread": own.spread, "delta": None, "threshold": None, "p": None, "gained": None, "lost": None,
                   "mark": None, "test": None, "clusters": None, "mde_pp": None,
                   "underpowered": None, "unsupported": own.unsupported, "calls": None, "ci95_delta": None,
                   "needs": None}
    if side is base or own.value is None or ref.value is None:
        return out
    delta = round(own.value - ref.value, 4)
    n = min(own.n, ref.n)
    threshold = max(ref.spread, own.spread, noise.floor(meta.unit, ref.value, n))
    metric = METRICS_BY_NAME.get((meta.group, meta.name))
    p = None
    lat = latency_test(base, side, meta.name) if meta.group == "latency" else None
    if metric is not None:
        test = paired_test(base, side, metric)
        p = round(test.p, 4)
        out.update(p=p, gained=test.gained, lost=test.lost, test=test.method, clusters=test.clusters)
    elif lat is not None:
        p = lat.p
        out.update(p=p, test=lat.method, clusters=min(lat.clusters), calls=list(lat.calls),
                   ci95_delta=None if lat.ci95 is None else list(lat.ci95), needs=lat.needs)
        if lat.needs:  # too thin a tail to call anything: say so, mark nothing
            out.update(delta=delta, threshold=round(threshold, 4), mark=NEEDS)
            return out
    moved = noise.is_move(delta, threshold, p)
    out.update(delta=delta, threshold=round(threshold, 4), mark=_mark(meta.better, delta) if moved else WITHIN)
    if not moved and metric is not None and delta:
        mde = mde_of(metric)
        out.update(mde_pp=mde, underpowered=None if mde is None else abs(delta) < mde)
    return out


def _mark(better: Better | None, delta: float) -> str:
    if better is None:
        return CHANGED
    return BETTER if (delta > 0) == (better == "up") else WORSE


def compare_sides(sides: list[Side], allowed: tuple[str, ...] = (), subject: tuple[str, ...] = SUBJECT) -> Comparison:
    """The comparison of every side against ``sides[0]``, the baseline (see module docstring);
    ``allowed`` are the setup differences the user accepted, labelled on each side's cells."""
    base = sides[0]
    diffs: list[Json] = [list(labels(base.runs[0], s.runs, allowed, subject)) if i else [] for i, s in enumerate(sides)]
    kpis: list[JsonObject] = []
    for meta in kpi_index(sides):
        ref = summarise(base, meta.group, meta.name)
        mde_of = functools.cache(functools.partial(min_detectable, base))
        cells: list[Json] = [{**cell(meta, base, side, ref, mde_of), "setup_diff": diffs[i]}
                             for i, side in enumerate(sides)]
        kpis.append({**meta.to_json(), "paired": (meta.group, meta.name) in METRICS_BY_NAME, "cells": cells})
    return {
        "baseline": base.name,
        "alpha": noise.ALPHA,
        "profiles": [{"name": s.name, "runs": len(s.runs), "labels": [r.label for r in s.runs],
                      "flags_changed": list(flags_changed(base.flags, s.flags)), "setup_diff": diffs[i]}
                     for i, s in enumerate(sides)],
        "kpis": kpis,
        "moved": {s.name: _moved(kpis, i) for i, s in enumerate(sides) if i},
        "flips": {s.name: flips(base, s) for s in sides[1:]},
    }


def _moved(kpis: list[JsonObject], index: int) -> list[Json]:
    out: list[Json] = []
    for k in kpis:
        cells = k["cells"]
        assert isinstance(cells, list)
        c, first = cells[index], cells[0]
        assert isinstance(c, dict) and isinstance(first, dict)
        if c["mark"] in (BETTER, WORSE, CHANGED):
            out.append({"group": k["group"], "name": k["name"], "baseline": first["value"], "value": c["value"],
                        "delta": c["delta"], "p": c["p"], "mark": c["mark"]})
    return out


def regressions(comparison: Comparison) -> list[str]:
    """``profile: KPI`` for every ▼ in a comparison."""
    moved = comparison["moved"]
    assert isinstance(moved, dict)
    return [f"{profile}: {m['name']}" for profile, ms in moved.items() for m in ms if m["mark"] == WORSE]
