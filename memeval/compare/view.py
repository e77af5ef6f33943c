"""The view model of a comparison: every cell already formatted, so templates hold no logic.

A cell reads ``value (Δ mark, p=…)``: Δ in pp for rates and points, ±0.00 for scores, and in %
of the baseline otherwise (absolute when the baseline is 0); ``p`` only where a paired test
applies. A KPI that no run measured is left out, and so is a group with no KPI left.
"""

from __future__ import annotations

from typing import Any

from memeval.compare.table import Comparison
from memeval.record import Unit
from memeval.report.render import environment
from memeval.report.view import DASH, fmt_kpi

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
    value = fmt_kpi(cell["value"], unit)
    label = f" [≠ {', '.join(cell['setup_diff'])}]" if cell.get("setup_diff") else ""
    if cell["mark"] is None or baseline is None:
        return value + label
    p = fmt_p(cell["p"])
    return f"{value} ({fmt_delta(cell['delta'], baseline, unit)} {cell['mark']}{', ' + p if p else ''}){label}"


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


def render_comparison(comparison: Comparison | None, template: str = "compare.md.j2", templates: str | None = None,
                      **extra: Any) -> str:
    """Render a comparison (see :func:`build_view` for None) with ``template``; ``extra`` values
    are passed to the template too."""
    return environment(templates).get_template(template).render(**build_view(comparison), **extra)
