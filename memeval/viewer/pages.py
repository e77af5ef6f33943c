"""The viewer's pages read off the index alone: the run list, a leaderboard and a trend.

Every number keeps its n and, where the record has one, its 95% interval; a KPI that was not
measured reads ``–``, never 0. Templates are rendered with the report's sandboxed, autoescaped
environment (:func:`memeval.report.render.environment`) with the viewer's own templates first.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from memeval.record import Unit
from memeval.report.charts import Point, frontier, frontier_chart
from memeval.report.render import environment
from memeval.report.view import DASH, fmt_kpi
from memeval.viewer.index import KpiRow, RunIndex, RunRow
from memeval.viewer.trend import trend_chart

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
PACK_HIT = ("accuracy", "pack hit (synthesis)")
EXTRACTIVE = ("accuracy", "extractive answer")
MODEL = ("accuracy", "model answer")
LATENCY = ("latency", "probe p50")
TOKENS = ("cost", "pack tokens (mean)")
ANSWER_COST = ("cost", "answerer $")
HEADLINE = (PACK_HIT, EXTRACTIVE, MODEL, LATENCY, TOKENS, ANSWER_COST)
"""The KPIs the list, the leaderboard and a trend show (group, name)."""
SORTS = {"date": "created_at", "label": "label", "suite": "suite", "engine": "engine", "mode": "answer_mode",
         "hit": PACK_HIT, "answer": "answer"}
"""``?sort=`` of the run list → a run column, or a KPI (sorted by value, unmeasured last)."""
LIST_PAGE = 200
"""Runs per page of the run list."""


def render(template: str, **context: object) -> str:
    """A viewer template rendered with the report's sandboxed, autoescaped environment."""
    return environment(TEMPLATES).get_template(template).render(**context)


def fmt_row_kpi(k: KpiRow | None) -> Markup:
    """The value, then ``lo – hi, n=…`` on a small second line; ``–`` with ``n=0`` when not
    measured, ``–`` alone when the run has no such KPI."""
    if k is None:
        return Markup(DASH)
    unit: Unit = k.unit  # type: ignore[assignment]  # the index holds what a Kpi's unit was
    ci = f"{fmt_kpi(k.ci95[0], unit)} – {fmt_kpi(k.ci95[1], unit)}, " if k.ci95 and k.value is not None else ""
    return Markup(f"{escape(fmt_kpi(k.value, unit))}<br><small>{escape(ci)}n={k.n}</small>")


def answer_kpi(run: RunRow) -> KpiRow | None:
    """The accuracy of the run's answers in its answer mode: the model's, else the extractive one."""
    model = run.kpi(*MODEL)
    return model if run.answer_mode != "extractive" and model is not None else run.kpi(*EXTRACTIVE)


@dataclass(frozen=True)
class ListQuery:
    """The run list's filter and order: ``q`` matches label, suite, engine, setup or key."""

    q: str = ""
    suite: str = ""
    engine: str = ""
    sort: str = "date"
    desc: bool = True
    page: int = 0

    @classmethod
    def of(cls, params: Mapping[str, Sequence[str]]) -> "ListQuery":
        """From query parameters (unknown sorts fall back to the date)."""
        def one(name: str, default: str = "") -> str:
            return (params.get(name) or [default])[0]
        sort, page = one("sort", "date"), one("page", "0")
        return cls(one("q").strip(), one("suite"), one("engine"), sort if sort in SORTS else "date",
                   one("desc", "1") != "0", int(page) if page.isdigit() else 0)

    def link(self, page: int) -> dict[str, object]:
        """The query parameters of this list at another page."""
        return {"q": self.q, "suite": self.suite, "engine": self.engine, "sort": self.sort,
                "desc": int(self.desc), "page": page}


def select(runs: list[RunRow], query: ListQuery) -> list[RunRow]:
    """``runs`` filtered and sorted as ``query`` says (unreadable runs always listed, last)."""
    needle = query.q.lower()
    kept = [r for r in runs if not r.error
            and (not needle or any(needle in v.lower()
                                   for v in (r.label, r.suite, r.engine, r.setup, r.key, r.answer_mode)))
            and (not query.suite or r.suite == query.suite) and (not query.engine or r.engine == query.engine)]
    key = SORTS[query.sort]
    if isinstance(key, tuple) or key == "answer":
        def value(r: RunRow) -> float | None:
            k = r.kpi(*key) if isinstance(key, tuple) else answer_kpi(r)
            return k.value if k is not None else None
        measured = sorted((r for r in kept if value(r) is not None), key=lambda r: value(r) or 0.0, reverse=query.desc)
        kept = measured + [r for r in kept if value(r) is None]
    else:
        column = str(key)
        kept.sort(key=lambda r: str(getattr(r, column)), reverse=query.desc)
    return kept + [r for r in runs if r.error]


def run_json(r: RunRow) -> dict[str, object]:
    """A run of the list as JSON: its columns and its headline KPIs (value, n, ci95)."""
    kpis = [{"group": k.group, "name": k.name, "value": k.value, "unit": k.unit, "n": k.n,
             "ci95": list(k.ci95) if k.ci95 else None} for k in r.kpis]
    return {"key": r.key, "error": r.error, "run_id": r.run_id, "label": r.label, "profile": r.profile,
            "suite": r.suite, "benchmark": r.benchmark, "engine": r.engine, "answer_mode": r.answer_mode,
            "created_at": r.created_at, "setup": r.setup, "probes": r.probes, "kpis": kpis}


def list_page(index: RunIndex, query: ListQuery) -> str:
    """The run list: the runs ``query`` selects, :data:`LIST_PAGE` at a time, with their headline
    KPIs, filters, sorting and compare boxes."""
    runs = index.runs(HEADLINE)
    matched = select(runs, query)
    pages = max(1, -(-len(matched) // LIST_PAGE))
    page = min(query.page, pages - 1)
    rows = [{"r": r, "hit": fmt_row_kpi(r.kpi(*PACK_HIT)), "answer": fmt_row_kpi(answer_kpi(r)),
             "latency": fmt_row_kpi(r.kpi(*LATENCY)), "tokens": fmt_row_kpi(r.kpi(*TOKENS))}
            for r in matched[page * LIST_PAGE:(page + 1) * LIST_PAGE]]
    return render("view_list.html.j2", rows=rows, query=query, total=len(runs), matched=len(matched), page=page,
                  pages=pages,
                  suites=sorted({r.suite for r in runs if r.suite}),
                  engines=sorted({r.engine for r in runs if r.engine}),
                  sorts=list(SORTS))


def leaderboard_page(index: RunIndex, suite: str) -> str:
    """Configurations (:func:`configuration`) × answer modes of one suite (the newest run of each),
    with the accuracy × latency
    frontier; without ``suite`` the list of suites to choose from."""
    runs = [r for r in index.runs(HEADLINE) if not r.error]
    suites = sorted({(r.suite, r.benchmark or "") for r in runs})
    if not suite:
        return render("view_leaderboard.html.j2", suite="", suites=suites, rows=[], chart=Markup(""), on_frontier=[])
    newest: dict[tuple[str, str], RunRow] = {}
    counts: dict[tuple[str, str], int] = {}
    for r in runs:
        if r.suite == suite:
            cell = (configuration(r), r.answer_mode)
            counts[cell] = counts.get(cell, 0) + 1
            if cell not in newest or r.created_at > newest[cell].created_at:
                newest[cell] = r
    points = [Point(f"{config} · {mode}", _value(answer_kpi(r)), _value(r.kpi(*LATENCY)), _value(r.kpi(*TOKENS)))
              for (config, mode), r in newest.items()]
    best = frontier(points)
    rows = [{"config": config, "mode": mode, "r": r, "runs": counts[(config, mode)], "star": p.label in best,
             "answer": fmt_row_kpi(answer_kpi(r)), "hit": fmt_row_kpi(r.kpi(*PACK_HIT)),
             "latency": fmt_row_kpi(r.kpi(*LATENCY)), "tokens": fmt_row_kpi(r.kpi(*TOKENS)),
             "cost": fmt_row_kpi(r.kpi(*ANSWER_COST))} for ((config, mode), r), p in zip(newest.items(), points)]
    rows.sort(key=lambda row: -(_value(answer_kpi(row["r"])) or -1.0))  # type: ignore[arg-type]
    chart = frontier_chart("Answer accuracy vs probe latency (circle area: pack tokens)", points)
    return render("view_leaderboard.html.j2", suite=suite, suites=suites, rows=rows, chart=chart,
                  on_frontier=sorted(best))


def configuration(r: RunRow) -> str:
    """What a leaderboard row stands for: the run's label (the engine's name unless ``--label``
    named it), its sweep profile, and the engine when the label is not its name."""
    name = r.label + (f" · {r.profile}" if r.profile else "")
    return name if r.label == r.engine else f"{name} ({r.engine})"


def _value(k: KpiRow | None) -> float | None:
    return k.value if k is not None else None


def trend_page(index: RunIndex, label: str) -> str:
    """Every run of ``label`` oldest first, each headline KPI with its interval, and a chart of
    the answer accuracy and the pack hit over time."""
    runs = sorted((r for r in index.runs(HEADLINE) if not r.error and r.label == label), key=lambda r: r.created_at)
    labels = sorted({r.label for r in index.runs(()) if not r.error})
    rows = [{"r": r, "previous": runs[i - 1] if i else None, "hit": fmt_row_kpi(r.kpi(*PACK_HIT)),
             "answer": fmt_row_kpi(answer_kpi(r)), "latency": fmt_row_kpi(r.kpi(*LATENCY)),
             "tokens": fmt_row_kpi(r.kpi(*TOKENS))} for i, r in enumerate(runs)]
    chart = trend_chart([(r.created_at, r.kpi(*PACK_HIT), answer_kpi(r)) for r in runs]) if runs else Markup("")
    return render("view_trend.html.j2", label=label, labels=labels, rows=rows, chart=chart)
