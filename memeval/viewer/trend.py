"""The trend chart: one label's runs in time order, each percentage KPI as a dot with its 95%
interval as a whisker, so a drop outside the intervals reads as a regression at a glance.

A KPI a run did not measure is left out for that run (no dot), never drawn at zero.
"""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup, escape

from memeval.report.charts import FONT, PALETTE
from memeval.viewer.index import KpiRow

WIDTH, HEIGHT, LEFT, TOP, PLOT_H = 900, 300, 50, 30, 220


def trend_chart(runs: Sequence[tuple[str, KpiRow | None, KpiRow | None]]) -> Markup:
    """(created_at, pack hit, answer accuracy) per run, oldest first, as one inline ``<svg>``."""
    step = (WIDTH - LEFT - 100) / max(1, len(runs) - 1) if len(runs) > 1 else 0.0  # dots 30 px inside the frame
    body = [f'<rect x="{LEFT}" y="{TOP}" width="{WIDTH - LEFT - 20}" height="{PLOT_H}" fill="none" stroke="#bbb"/>']
    for tick in (0, 25, 50, 75, 100):
        body.append(f'<text x="{LEFT - 6}" y="{_y(tick) + 4:.1f}" text-anchor="end" fill="#555">{tick}%</text>')
    names = ("pack hit (synthesis)", "answer accuracy")
    for s, name in enumerate(names):
        x0 = LEFT + 10 + 190 * s
        body.append(f'<rect x="{x0}" y="8" width="10" height="10" fill="{PALETTE[s]}"/>'
                    f'<text x="{x0 + 14}" y="17">{escape(name)}</text>')
        for i, (when, hit, answer) in enumerate(runs):
            body += _dot(LEFT + 30 + i * step + 4 * s, (hit, answer)[s], PALETTE[s], f"{when} · {name}")
    for i, run in enumerate(runs):
        if len(runs) <= 12 or i in (0, len(runs) - 1):
            body.append(f'<text x="{LEFT + 30 + i * step:.1f}" y="{TOP + PLOT_H + 16}" text-anchor="middle" '
                        f'fill="#555">{escape(run[0][:10])}</text>')
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" width="{WIDTH}" height="{HEIGHT}" '
            f'viewBox="0 0 {WIDTH} {HEIGHT}" {FONT}><title>Trend</title>')
    return Markup(head + "".join(body) + "</svg>")


def _y(pct: float) -> float:
    return TOP + PLOT_H - PLOT_H * pct / 100


def _dot(x: float, k: KpiRow | None, colour: str, label: str) -> list[str]:
    if k is None or k.value is None or k.unit != "pct":
        return []
    out = []
    if k.ci95:
        out.append(f'<path class="whisker" d="M{x:.1f} {_y(k.ci95[0]):.1f}V{_y(k.ci95[1]):.1f}" stroke="{colour}"/>')
    ci = f", 95% CI {k.ci95[0]:.1f}–{k.ci95[1]:.1f}%" if k.ci95 else ""
    out.append(f'<circle class="run" cx="{x:.1f}" cy="{_y(k.value):.1f}" r="4" fill="{colour}">'
               f'<title>{escape(label)}: {k.value:.1f}% (n={k.n}{ci})</title></circle>')
    return out
