"""Small chart helpers: typed inputs in, one inline ``<svg>`` string out (as :class:`Markup`, so
an autoescaping template embeds it as markup). Every label is escaped here; nothing is fetched.

A value that was not measured is drawn as the words "no data", never as a zero-length bar.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from memeval.stats.basic import percentile, wilson

PALETTE = ("#3b6fb6", "#e08a2c", "#5a9e4b", "#9b59b6", "#c0392b", "#16a085")
LABEL_W, BAR_W, VALUE_W = 200, 760, 130
WIDTH = LABEL_W + BAR_W + VALUE_W
FONT = 'font-family="system-ui, sans-serif" font-size="12"'
MAX_DOTS = 400
"""Most sample dots drawn per latency row; the box and ticks always use every sample."""


@dataclass(frozen=True)
class RateBar:
    """One k-of-n rate: drawn as a bar at k/n with its 95% Wilson interval as whiskers."""

    k: int
    n: int


@dataclass(frozen=True)
class Series:
    """One coloured series of a rate chart: one bar (or None: not measured) per category."""

    name: str
    bars: tuple[RateBar | None, ...]


@dataclass(frozen=True)
class Samples:
    """A row of the latency chart: a label and every sample (ms) measured for it."""

    label: str
    ms: tuple[float, ...]


@dataclass(frozen=True)
class Amount:
    """A row of the amounts chart: a label, a value (None: not measured) and its text."""

    label: str
    value: float | None
    text: str


@dataclass(frozen=True)
class Point:
    """A configuration on the frontier: accuracy (%), latency (ms) and tokens; None = no data."""

    label: str
    accuracy: float | None
    latency_ms: float | None
    tokens: float | None


def _svg(title: str, height: int, body: list[str], width: int = WIDTH) -> Markup:
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" {FONT}><title>{escape(title)}</title>')
    return Markup(head + "".join(body) + "</svg>")


def _text(x: float, y: float, text: str, anchor: str = "start", extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" {extra}>{escape(text)}</text>'


def _legend(names: Sequence[str], y: float) -> list[str]:
    out, x = [], float(LABEL_W)
    for i, name in enumerate(names):
        out.append(f'<rect x="{x:.1f}" y="{y - 9:.1f}" width="10" height="10" fill="{PALETTE[i % len(PALETTE)]}"/>')
        out.append(_text(x + 14, y, name))
        x += 24 + 7 * len(name)
    return out


def rate_chart(title: str, categories: Sequence[str], series: Sequence[Series]) -> Markup:
    """Horizontal bars 0–100%, one group per category, one bar per series, with Wilson whiskers
    and the ``NN% (k/n)`` text; a series with one name and no legend reads as a plain bar chart."""
    bar_h, gap = 14, 10
    group_h = bar_h * len(series) + gap
    top = 26 if len(series) > 1 else 8
    height = top + group_h * len(categories) + 22
    body = _legend([s.name for s in series], 14) if len(series) > 1 else []
    for c, category in enumerate(categories):
        y0 = top + c * group_h
        body.append(_text(LABEL_W - 8, y0 + group_h / 2, category, "end"))
        for s, one in enumerate(series):
            body += _rate_bar(one.bars[c] if c < len(one.bars) else None, y0 + s * bar_h, bar_h - 2,
                              PALETTE[s % len(PALETTE)], f"{category} · {one.name}")
    body += _axis(top + group_h * len(categories), ("0%", "50%", "100%"))
    return _svg(title, height, body)


def _rate_bar(bar: RateBar | None, y: float, h: float, colour: str, label: str) -> list[str]:
    if bar is None or bar.n == 0:
        return [_text(LABEL_W + 4, y + h - 2, "no data", extra='fill="#888" font-style="italic"')]
    share = bar.k / bar.n
    text = f"{100 * share:.0f}% ({bar.k}/{bar.n})"
    out = [f'<rect class="bar" x="{LABEL_W}" y="{y:.1f}" width="{BAR_W * share:.1f}" height="{h:.1f}" '
           f'fill="{colour}"><title>{escape(label)}: {escape(text)}</title></rect>']
    ci = wilson(bar.k, bar.n)
    if ci:
        lo, hi, mid = LABEL_W + BAR_W * ci[0], LABEL_W + BAR_W * ci[1], y + h / 2
        out.append(f'<path class="whisker" d="M{lo:.1f} {mid:.1f}H{hi:.1f}M{lo:.1f} {y + 2:.1f}V{y + h - 2:.1f}'
                   f'M{hi:.1f} {y + 2:.1f}V{y + h - 2:.1f}" stroke="#222" fill="none"/>')
    out.append(_text(LABEL_W + BAR_W + 6, y + h - 2, text))
    return out


def _axis(y: float, ticks: Sequence[str]) -> list[str]:
    out = [f'<path d="M{LABEL_W} {y:.1f}H{LABEL_W + BAR_W}" stroke="#999"/>']
    for i, tick in enumerate(ticks):
        x = LABEL_W + BAR_W * i / max(1, len(ticks) - 1)
        out.append(f'<path d="M{x:.1f} {y:.1f}v4" stroke="#999"/>')
        out.append(_text(x, y + 16, tick, "middle", 'fill="#555"'))
    return out


def latency_chart(title: str, rows: Sequence[Samples]) -> Markup:
    """One row per lifecycle call on a log-ms axis: every sample as a dot (every k-th above
    :data:`MAX_DOTS`), the box from p25 to
    p75, a tick at the median and a diamond at p95 (a p95 of fewer than 20 samples is still
    drawn: the table and the KPIs say when it is too few to read)."""
    values = [v for r in rows for v in r.ms if v > 0]
    if not values:
        return _svg(title, 30, [_text(LABEL_W, 18, "no data", extra='fill="#888" font-style="italic"')])
    lo, hi = math.log10(min(values)), math.log10(max(values))
    lo, hi = math.floor(lo), max(math.ceil(hi), math.floor(lo) + 1)

    def x(ms: float) -> float:
        return LABEL_W + BAR_W * (math.log10(max(ms, 10 ** lo)) - lo) / (hi - lo)

    row_h, body = 20, []
    for i, row in enumerate(rows):
        y = 8 + i * row_h + row_h / 2
        body.append(_text(LABEL_W - 8, y + 4, row.label, "end"))
        body += _strip(row, y, x)
    bottom = 8 + row_h * len(rows)
    body += [f'<path d="M{LABEL_W} {bottom}H{LABEL_W + BAR_W}" stroke="#999"/>']
    for p in range(lo, hi + 1):
        body.append(_text(x(10 ** p), bottom + 16, _ms(10 ** p), "middle", 'fill="#555"'))
    return _svg(title, bottom + 24, body, WIDTH + 60)


def _strip(row: Samples, y: float, x: Callable[[float], float]) -> list[str]:
    ms = sorted(row.ms)
    if not ms:
        return [_text(LABEL_W + 4, y + 4, "no data", extra='fill="#888" font-style="italic"')]
    q = {p: percentile(ms, p) or 0.0 for p in (0.25, 0.5, 0.75, 0.95)}
    every = -(-len(ms) // MAX_DOTS)  # a large run's thousands of samples: every k-th dot, in order
    out = [f'<circle class="sample" cx="{x(v):.1f}" cy="{y + ((i * 7) % 9) - 4:.1f}" r="2" fill="#3b6fb6" '
           f'fill-opacity="0.45"/>' for i, v in enumerate(ms[::every])]
    out.append(f'<rect class="box" x="{x(q[0.25]):.1f}" y="{y - 6:.1f}" width="{max(1.0, x(q[0.75]) - x(q[0.25])):.1f}" '
               f'height="12" fill="none" stroke="#222"><title>{escape(row.label)}: n={len(ms)}'
               f'{f" (one dot per {every} samples)" if every > 1 else ""}, '
               f'p50 {q[0.5]:.2f} ms, p95 {q[0.95]:.2f} ms</title></rect>')
    out.append(f'<path d="M{x(q[0.5]):.1f} {y - 6:.1f}V{y + 6:.1f}" stroke="#c0392b" stroke-width="2"/>')
    px = x(q[0.95])
    out.append(f'<path d="M{px:.1f} {y - 4:.1f}l4 4l-4 4l-4 -4z" fill="#e08a2c"/>')
    out.append(_text(LABEL_W + BAR_W + 6, y + 4, f"p50 {_ms(q[0.5])} · n={len(ms)}"))
    return out


def _ms(v: float) -> str:
    return f"{v:.3g} ms" if v < 1000 else f"{v / 1000:.3g} s"


def amount_chart(title: str, rows: Sequence[Amount]) -> Markup:
    """Horizontal bars for amounts of one kind (tokens, dollars, calls), scaled to the largest."""
    top = max((r.value for r in rows if r.value is not None), default=0.0) or 1.0
    row_h, body = 20, []
    for i, row in enumerate(rows):
        y = 6 + i * row_h
        body.append(_text(LABEL_W - 8, y + 12, row.label, "end"))
        if row.value is None:
            body.append(_text(LABEL_W + 4, y + 12, "no data", extra='fill="#888" font-style="italic"'))
            continue
        width = BAR_W * max(0.0, row.value) / top
        body.append(f'<rect class="bar" x="{LABEL_W}" y="{y:.1f}" width="{width:.1f}" height="14" fill="{PALETTE[2]}">'
                    f'<title>{escape(row.label)}: {escape(row.text)}</title></rect>')
        body.append(_text(LABEL_W + width + 6, y + 12, row.text))
    return _svg(title, 12 + row_h * len(rows), body, WIDTH + 40)


def pareto(points: Sequence[Point]) -> set[str]:
    """Labels of the points no other point beats: another at least as accurate, as fast and as
    lean, and strictly better on one, dominates. Points with any value missing are left out."""
    full = [(p.label, p.accuracy, -p.latency_ms, -p.tokens) for p in points
            if p.accuracy is not None and p.latency_ms is not None and p.tokens is not None]

    def beats(a: tuple[str, float, float, float], b: tuple[str, float, float, float]) -> bool:
        return all(x >= y for x, y in zip(a[1:], b[1:])) and a[1:] != b[1:]

    return {b[0] for b in full if not any(beats(a, b) for a in full if a is not b)}


def frontier(points: Sequence[Point]) -> set[str]:
    """Labels of the points on the accuracy × latency frontier: a point is on it when no other
    point is at least as accurate and at least as fast, and strictly better on one of the two.
    Points missing either value are left out (tokens play no part: see :func:`pareto`)."""
    full = [(p.label, p.accuracy, -p.latency_ms) for p in points if p.accuracy is not None and p.latency_ms is not None]
    return {b[0] for b in full
            if not any(a[1] >= b[1] and a[2] >= b[2] and (a[1], a[2]) != (b[1], b[2]) for a in full)}


def _scale(lo: float, hi: float, pad: float) -> tuple[float, float]:
    """A domain around [lo, hi] with ``pad`` of its span (at least ``pad``) on each side, so no
    point is drawn on the frame."""
    span = max(hi - lo, 1.0)
    return lo - pad * span, hi + pad * span


def frontier_chart(title: str, points: Sequence[Point]) -> Markup:
    """Accuracy (y, %) against latency (x, log ms), each configuration a circle whose area grows
    with its tokens; the points on the accuracy × latency frontier (see :func:`frontier`) filled
    and starred, the rest hollow. Points that coincide share one circle and one label.
    Configurations missing a value are listed under the chart as "no data"."""
    drawn = [p for p in points if p.accuracy is not None and p.latency_ms is not None]
    best, missing = frontier(points), [p.label for p in points if p not in drawn]
    left, top, w, h = 60, 24, 760, 300
    lat = [math.log10(max(p.latency_ms or 0.0, 1e-3)) for p in drawn] or [0.0]
    x_lo, x_hi = _scale(min(lat), max(lat), 0.08)
    acc = [p.accuracy or 0.0 for p in drawn] or [0.0, 100.0]
    top_acc = min(100.0, max(acc) + 5)
    y_lo, y_hi = _scale(min(max(0.0, min(acc) - 5), top_acc - 10), top_acc, 0.1)  # 10 points at least
    most = max((p.tokens or 0.0 for p in drawn), default=0.0) or 1.0

    def xpos(log_ms: float) -> float:
        return left + w * (log_ms - x_lo) / (x_hi - x_lo)

    def ypos(a: float) -> float:
        return top + h - h * (a - y_lo) / (y_hi - y_lo)

    body = [f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="none" stroke="#bbb"/>',
            _text(left + w / 2, top + h + 32, "latency (ms, log scale) → lower is better", "middle", 'fill="#555"'),
            _text(14, top + h / 2, "accuracy %", "middle", f'fill="#555" transform="rotate(-90 14 {top + h / 2})"')]
    step = max(5, 5 * round((y_hi - y_lo) / 25))
    for pct in range(5 * math.ceil(y_lo / 5), int(y_hi) + 1, step):
        body.append(_text(left - 6, ypos(pct) + 4, f"{pct}", "end", 'fill="#555"'))
    ticks = _log_ticks(x_lo, x_hi)
    for tick in ticks:
        body.append(_text(xpos(tick), top + h + 16, _ms(10 ** tick), "middle", 'fill="#555"'))
    places: dict[tuple[int, int], list[Point]] = {}
    for p in drawn:
        places.setdefault((round(xpos(math.log10(max(p.latency_ms or 0.0, 1e-3)))), round(ypos(p.accuracy or 0.0))),
                          []).append(p)
    for i, ((cx, cy), group) in enumerate(places.items()):
        body += _frontier_point(cx, cy, group, best, PALETTE[i % len(PALETTE)], most)
    if missing:
        body.append(_text(left, top + h + 48, "no data: " + ", ".join(missing), extra='fill="#888"'))
    return _svg(title, top + h + 56, body, left + w + 200)


def _log_ticks(lo: float, hi: float) -> list[float]:
    """Ticks (log10 ms) inside [lo, hi]: the powers of ten, with 2 and 5 times them when fewer
    than three powers fit, or three evenly spaced values in a range narrower than that."""
    decades = range(math.floor(lo), math.ceil(hi) + 1)
    for steps in ((1.0,), (1.0, 2.0, 5.0)):
        ticks = [math.log10(s * 10 ** d) for d in decades for s in steps if lo <= math.log10(s * 10 ** d) <= hi]
        if len(ticks) >= 3:
            return ticks
    return ticks if len(ticks) >= 2 else [lo + (hi - lo) * i / 4 for i in (1, 2, 3)]


def _frontier_point(cx: int, cy: int, group: list[Point], best: set[str], colour: str, most: float) -> list[str]:
    """One circle (for every point at this place) and one label naming them all."""
    star = any(p.label in best for p in group)
    r = 5 + 12 * math.sqrt(max(p.tokens or 0.0 for p in group) / most)
    tip = "; ".join(f"{p.label}: accuracy {p.accuracy:.1f}%, latency {p.latency_ms:.2f} ms, tokens "
                    + ("no data" if p.tokens is None else f"{p.tokens:g}") for p in group)
    tip += " — on the accuracy × latency frontier" if star else ""
    label = ("★ " if star else "") + ", ".join(p.label for p in group)
    return [f'<circle class="{"pareto" if star else "point"}" cx="{cx}" cy="{cy}" r="{r:.1f}" '
            f'fill="{colour if star else "none"}" fill-opacity="0.6" stroke="{colour}" stroke-width="2">'
            f'<title>{escape(tip)}</title></circle>',
            _text(cx + r + 4, cy + 4, label)]
