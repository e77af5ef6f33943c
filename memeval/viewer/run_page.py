"""A run in the viewer: everything run.html shows (the viewer's template extends it), with the
probes searched, grouped and paged on the server, so a 2,000-question run sends one page of
probes, not every pack.

``?q=`` searches the question, the pack, the probe id and the scenario (case-insensitive);
``?show=`` keeps one outcome class (``misses`` for any failure); ``?group=`` orders the probes by
scenario, category or miss type with a heading per group; ``?open=ID`` shows the page holding
that probe (and the page's script, reading ``#open=ID``, scrolls to it and outlines it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from urllib.parse import quote

from memeval.record import ProbeResult, RunRecord
from memeval.report.html_view import MISSES_OPEN, OUTCOMES, charts, miss_groups, outcomes, phases_identical, probe_view
from memeval.report.view import build_view, misses
from memeval.viewer.pages import render

PAGE = 100
"""Probes per page."""
ACCURACY_ROWS = 60
"""Per-scenario rows of the accuracy table shown (the ``all`` rows always are), and rows of the
Scenarios table."""
MISS_ROWS = 200
"""Rows shown per group of the Misses table."""
GROUPS: dict[str, Callable[[ProbeResult, tuple[str, ...]], str] | None] = {
    "none": None,
    "scenario": lambda p, o: p.scenario,
    "category": lambda p, o: p.category or "(no category)",
    "miss": lambda p, o: ", ".join(OUTCOMES[x] for x in o) or "pass",
}


@dataclass(frozen=True)
class ProbeQuery:
    """Which probes the page shows: search, outcome filter, grouping, page, probe to open."""

    q: str = ""
    show: str = "all"
    group: str = "none"
    page: int = 0
    open: str = ""

    @classmethod
    def of(cls, params: Mapping[str, Sequence[str]]) -> "ProbeQuery":
        """From query parameters; unknown values fall back to the defaults."""
        def one(name: str, default: str = "") -> str:
            return (params.get(name) or [default])[0]
        show, group, page = one("show", "all"), one("group", "none"), one("page", "0")
        return cls(one("q").strip()[:200], show if show in ("all", "misses", *OUTCOMES, "pass") else "all",
                   group if group in GROUPS else "none", int(page) if page.isdigit() else 0, one("open")[:200])


def _shown(p: ProbeResult, o: tuple[str, ...], query: ProbeQuery) -> bool:
    if query.show == "misses" and not o or query.show == "pass" and o:
        return False
    if query.show not in ("all", "misses", "pass") and query.show not in o:
        return False
    needle = query.q.lower()
    return not needle or any(needle in (text or "").lower() for text in (p.question, p.pack, p.id, p.scenario))


def select(record: RunRecord, query: ProbeQuery) -> tuple[list[tuple[ProbeResult, tuple[str, ...]]], ProbeQuery]:
    """The probes ``query`` selects, grouped, and the query as applied: asked to open a probe the
    filters hide, the filters are cleared; the page is the one holding that probe."""
    every = [(p, outcomes(p)) for p in record.probes]
    chosen = [x for x in every if _shown(*x, query)]
    if query.open and not any(p.id == query.open for p, _ in chosen):
        query = replace(query, q="", show="all")
        chosen = every
    key = GROUPS[query.group]
    if key is not None:
        chosen.sort(key=lambda x: key(*x))
    if query.open:
        at = next((i for i, (p, _) in enumerate(chosen) if p.id == query.open), None)
        query = replace(query, page=at // PAGE if at is not None else query.page)
    return chosen, replace(query, page=min(query.page, max(0, (len(chosen) - 1) // PAGE)))


def viewer_link(probe_id: str) -> str:
    """A link within the viewer's run page to the page holding the probe, opened and scrolled to."""
    q = quote(probe_id, safe="")
    return f"?open={q}#open={q}"


def run_page(record: RunRecord, key: str, query: ProbeQuery) -> str:
    """The run's page (see the module docstring)."""
    view = build_view(record)
    rows = view["accuracy"]
    assert isinstance(rows, list)
    scenario_rows = [i for i, a in enumerate(rows) if a["name"] != "**all**"]
    dropped = set(scenario_rows[ACCURACY_ROWS:])
    kept = [a for i, a in enumerate(rows) if i not in dropped]
    chosen, query = select(record, query)
    window = chosen[query.page * PAGE:(query.page + 1) * PAGE]
    key_of = GROUPS[query.group]
    probes = [(key_of(p, o) if key_of else "", probe_view(p)) for p, o in window]
    every = [outcomes(p) for p in record.probes]
    view.update({"accuracy": kept, "accuracy_hidden": len(rows) - len(kept),
                 "scenarios_shown": record.scenarios[:ACCURACY_ROWS], "charts": charts(record),
                 "phases_identical": phases_identical(record), "probe_views": [v for _, v in probes], "grouped": probes,
                 "outcome_names": OUTCOMES, "outcome_counts": {o: sum(1 for x in every if o in x) for o in OUTCOMES},
                 "passes": sum(1 for x in every if not x), "miss_groups": miss_groups(misses(record), MISS_ROWS),
                 "misses_open": MISSES_OPEN, "probe_link": viewer_link, "key": key, "query": query,
                 "matched": len(chosen), "page_size": PAGE, "pages": max(1, -(-len(chosen) // PAGE)),
                 "groups": list(GROUPS), "shows": ["all", "misses", "pass", *OUTCOMES]})
    return render("view_run.html.j2", **view)
