"""The view model of a comparison: every cell already formatted, so templates hold no logic.

A cell reads ``value (Δ mark, p=…)``: Δ in pp for rates and points, ±0.00 for scores, and in %
of the baseline otherwise (absolute when the baseline is 0); ``p`` only where a paired test
applies, and for latency with ``n=baseline/side`` calls; a latency tail too thin to test reads
``value (Δ, needs repeats: n=…)``. A KPI that no run measured is left out, and so is a group with no KPI left.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from memeval.comparison.table import Comparison
from memeval.record import Unit
from memeval.report.charts import Point, frontier_chart, pareto
from memeval.report.render import environment
from memeval.report.view import DASH, fmt_kpi, unsupported_text

Cells = Any
"""The comparison read back as the JSON it is (:data:`Comparison`): the template edge."""


def fmt_delta(delta: float, baseline: float, unit: Unit) -> str:
    """Δ in the unit the comparison reads it in (see module docstring)."""
    if unit in ("pct", "points"):
        return f"{delta:+.1f} pp"
    if unit == "score":
        return f"{delta:+.2f}"
    if baseline:
        return f"{100 * delta / abs(baseline):+.0f}%"
    sign = "+" if delta >= 0 else "-"
    return f"{sign}{fmt_kpi(abs(delta), unit)}"


def fmt_p(p: float | None) -> str:
    """``p=0.031``, ``p<0.001``, or empty when no paired test applies."""
    if p is None:
        return ""
    return "p<0.001" if p < 0.001 else f"p={p:.3f}"


def fmt_cell(cell: Cells, baseline: float | None, unit: Unit) -> str:
    """``value`` for the baseline, ``value (Δ mark, p=…)`` for a compared side, followed by
    ``[≠ field, …]`` when the side's setup differs from the baseline's in allowed fields."""
    if cell.get("unsupported"):
        return unsupported_text(cell["unsupported"])
    value = fmt_kpi(cell["value"], unit)
    label = f" [≠ {', '.join(cell['setup_diff'])}]" if cell.get("setup_diff") else ""
    if cell["mark"] is None or baseline is None:
        return value + label
    if cell["mark"] == "?":
        p = fmt_p(cell["p"])
        return f"{value} ({fmt_delta(cell['delta'], baseline, unit)}, {p + ', ' if p else ''}n={_calls(cell)}, " \
               f"needs repeats){label}"
    p = fmt_p(cell["p"])
    n = f", n={_calls(cell)}" if cell.get("calls") else ""
    return f"{value} ({fmt_delta(cell['delta'], baseline, unit)} {cell['mark']}{', ' + p if p else ''}{n}){label}"


def _calls(cell: Cells) -> str:
    """``base/side`` calls a latency cell was tested on."""
    return "/".join(str(c) for c in cell.get("calls") or ())


def build_view(comparison: Comparison | None) -> dict[str, object]:
    """Everything compare.md.j2 shows, formatted; for None (a sweep where no cell completed) a
    view with ``c`` null and nothing to show."""
    if comparison is None:
        return {"c": None, "profiles": [], "tables": [], "moved": [], "flips": [], "underpowered": []}
    data: Cells = comparison
    names = [p["name"] for p in data["profiles"]]
    shown = [k for k in data["kpis"] if any(c["value"] is not None for c in k["cells"])]
    groups: dict[str, list[Cells]] = {}
    for k in shown:
        groups.setdefault(k["group"], []).append(k)
    tables = [{"group": group, "columns": [k["name"] for k in ks],
               "rows": [{"profile": name, "cells": [fmt_cell(k["cells"][i], k["cells"][0]["value"], k["unit"]) for k in ks]}
                        for i, name in enumerate(names)]} for group, ks in groups.items()]
    units = {(k["group"], k["name"]): k["unit"] for k in data["kpis"]}
    moved = [{"profile": name, "lines": [_moved_line(m, units[(m["group"], m["name"])]) for m in ms]}
             for name, ms in data["moved"].items()]
    return {
        "c": comparison,
        "profiles": [{"name": p["name"] + (" (baseline)" if i == 0 and p["name"] != "baseline" else ""), "runs": p["runs"],
                      "flags": ", ".join(f"`{f}`" for f in p["flags_changed"]) or DASH,
                      "setup_diff": ", ".join(f"`{f}`" for f in p.get("setup_diff", [])) or DASH}
                     for i, p in enumerate(data["profiles"])],
        "tables": tables,
        "moved": moved,
        "flips": [{"profile": name, **f} for name, fs in data["flips"].items() for f in fs],
        "underpowered": [f"{c['profile']}: {k['group']} / {k['name']} {fmt_delta(c['delta'], 0.0, k['unit'])} reads ~, "
                         f"but the smallest change this comparison could detect is {c['mde_pp']:.1f} pp"
                         for k in shown for c in k["cells"] if c.get("underpowered")],
    }


def _moved_line(m: Cells, unit: Unit) -> str:
    p = fmt_p(m["p"])
    before, after = fmt_kpi(m["baseline"], unit), fmt_kpi(m["value"], unit)
    return (f"{m['mark']} {m['group']} / {m['name']}: {before} → {after} "
            f"({fmt_delta(m['delta'], m['baseline'], unit)}{', ' + p if p else ''})")


MARK_CLASS = {"▲": "better", "▼": "worse", "Δ": "changed", "~": "noise", "?": "needs-repeats"}
FRONTIER = {"accuracy": "pack hit (synthesis)", "latency_ms": "pre_turn p50", "tokens": "pack tokens (mean)"}
"""The KPIs the frontier chart places each profile by (accuracy ↑, latency ↓, tokens ↓)."""


def _grid_cell(cell: Cells, baseline: float | None, unit: Unit) -> dict[str, str]:
    """One grid cell: its text, its ▲/▼/Δ/~ class and a hover title with Δ and p."""
    mark = cell["mark"]
    title = "baseline" if mark is None else f"{MARK_CLASS[mark]}: Δ " + (
        fmt_delta(cell["delta"], baseline, unit) if baseline is not None else DASH) + (
        f", {fmt_p(cell['p'])}" if cell["p"] is not None else ", no paired test") + f", {cell['runs']} run(s), n={cell['n']}"
    return {"text": fmt_cell(cell, baseline, unit), "css": MARK_CLASS.get(mark or "", "base"), "title": title}


def frontier_points(data: Cells) -> list[Point]:
    """Each profile's place on the frontier: the mean of its runs for the :data:`FRONTIER` KPIs."""
    by_name = {k["name"]: k for k in data["kpis"]}

    def value(name: str, i: int) -> float | None:
        kpi = by_name.get(name)
        return None if kpi is None else kpi["cells"][i]["value"]

    return [Point(p["name"], *(value(FRONTIER[axis], i) for axis in ("accuracy", "latency_ms", "tokens")))
            for i, p in enumerate(data["profiles"])]


def build_html_view(comparison: Comparison | None) -> dict[str, object]:
    """compare.html's additions: the coloured grid, the frontier chart and who is Pareto-better."""
    if comparison is None:
        return {"grid": [], "grid_profiles": [], "frontier": Markup(""), "pareto": []}
    data: Cells = comparison
    names = [p["name"] for p in data["profiles"]]
    shown = [k for k in data["kpis"] if any(c["value"] is not None for c in k["cells"])]
    grid = [{"group": k["group"], "name": k["name"], "better": {"up": "↑", "down": "↓"}.get(k["better"] or "", ""),
             "cells": [_grid_cell(c, k["cells"][0]["value"], k["unit"]) for c in k["cells"]]} for k in shown]
    points = frontier_points(data)
    best = pareto(points)
    return {"grid": grid, "grid_profiles": names, "pareto": [p.label for p in points if p.label in best],
            "frontier": frontier_chart("Accuracy vs latency vs tokens (circle area: pack tokens)", points)}


def render_comparison(comparison: Comparison | None, template: str = "compare.md.j2", templates: str | None = None,
                      **extra: Any) -> str:
    """Render a comparison (see :func:`build_view` for None) with ``template``; ``extra`` values
    are passed to the template too. An HTML template also gets :func:`build_html_view`."""
    view = build_view(comparison)
    if template.endswith(".html.j2"):
        view.update(build_html_view(comparison))
    return environment(templates).get_template(template).render(**view, **extra)
