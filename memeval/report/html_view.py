"""What run.html shows beyond run.md's view: the charts, and each probe's verdicts in words,
its outcome class (what the page's filters select on) and its pack with the expected, stale and
forbidden strings marked where the project's matcher finds them.

Pack text is untrusted: it is split at the matcher's offsets into the ORIGINAL text and every
piece is escaped before the ``<mark>`` tags go around it, so no pack content becomes markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote

from markupsafe import Markup, escape

from memeval.record import ProbeResult, RunRecord, Totals
from memeval.report.charts import Amount, RateBar, Samples, Series, amount_chart, latency_chart, rate_chart
from memeval.report.view import DASH, Row, fmt_kpi, misses
from memeval.score.match import spans

OUTCOMES = {"pack-miss": "pack miss", "answer-miss": "answer miss", "stale-first": "stale value first",
            "leak": "leak", "abstain-fail": "invented an answer", "unscored": "not scored"}
"""Outcome class → its words; a scored probe with none of these is a ``pass``."""


@dataclass(frozen=True)
class ProbeView:
    """One probe as run.html shows it: verdict words, outcome classes and the marked pack."""

    p: ProbeResult
    outcomes: tuple[str, ...]
    verdicts: tuple[tuple[str, str], ...]
    pack: Markup

    @property
    def css(self) -> str:
        """The <details> classes: its outcomes, or ``pass``."""
        return " ".join(self.outcomes) or "pass"

    @property
    def headline(self) -> str:
        """The outcome in words, for the summary line."""
        if self.p.status != "scored":
            return f"{self.p.status}: {self.p.reason or DASH}"
        return ", ".join(OUTCOMES[o] for o in self.outcomes) or "pass"


def outcomes(p: ProbeResult) -> tuple[str, ...]:
    """The failure classes of a probe (empty for a pass); ``unscored`` when it was not scored."""
    if p.status != "scored":
        return ("unscored",)
    found = []
    if p.abstain:
        found += ["abstain-fail"] if p.invented else []
    elif p.hit is False:
        found.append("pack-miss")
    if p.answer_ok is False or p.llm_ok is False:  # the graders decide; the judge's word is shown beside
        found.append("answer-miss")
    if p.stale_first:
        found.append("stale-first")
    if p.leak:
        found.append("leak")
    return tuple(found)


def _yes_no(value: bool | None, yes: str, no: str, unknown: str) -> str:
    return unknown if value is None else (yes if value else no)


def verdicts(p: ProbeResult) -> tuple[tuple[str, str], ...]:
    """(what, verdict in words) for the pack, the extractive and model answers and the judge."""
    if p.abstain:
        pack = _yes_no(p.invented, "invents an answer (should abstain)", "abstains, as it should", "not scored")
    else:
        pack = _yes_no(p.hit, f"holds the answer (rank {p.rank})" if p.rank else "holds the answer",
                       "does not hold the answer", "not scored")
    if p.stale_first:
        pack += "; a stale value ranks first"
    if p.leak:
        pack += "; leaks " + ", ".join(p.leaked)
    judge = p.judge.llm_judge_ok if p.judge is not None else None
    return (("Pack", pack),
            ("Extractive answer", _yes_no(p.answer_ok, "right", "wrong", "not graded")),
            ("Model answer", _yes_no(p.llm_ok, "right", "wrong", "not asked")),
            ("Judge", _yes_no(judge, "accepts", "rejects", "not asked")))


def marked(text: str, kinds: Sequence[tuple[str, Sequence[str]]], mode: str) -> Markup:
    """``text`` escaped, with every occurrence of each kind's strings in ``<mark class=kind>``
    (the first kind wins where two overlap)."""
    found = sorted((start, end, kind) for kind, needles in kinds for n in needles for start, end in spans(text, n, mode))
    out, at = [], 0
    for start, end, kind in found:
        if start < at:
            continue
        out.append(escape(text[at:start]))
        out.append(Markup('<mark class="{}">{}</mark>').format(kind, text[start:end]))
        at = end
    out.append(escape(text[at:]))
    return Markup("").join(out)


def probe_view(p: ProbeResult) -> ProbeView:
    """A probe for run.html."""
    accepted = tuple(s for alt in p.accept for s in alt)
    kinds = (("expect", p.expect + accepted), ("stale", p.stale), ("forbid", p.forbid))
    return ProbeView(p, outcomes(p), verdicts(p), marked(p.pack or "", kinds, p.match))


def _rates(totals: Sequence[Totals | None], pick: str) -> tuple[RateBar | None, ...]:
    bars = []
    for t in totals:
        value = getattr(t, pick) if t is not None else None
        bars.append(RateBar(value.k, value.n) if value is not None else None)
    return tuple(bars)


def phases_identical(record: RunRecord) -> bool:
    """Whether every phase's pack hits are the same, per scenario and overall (nothing the
    synthesis step built changed a pack hit): the accuracy chart then draws them once."""
    bodies = list(record.totals.values())
    return len(bodies) > 1 and all(b.all.pack_hit == bodies[0].all.pack_hit and
                                   {s: t.pack_hit for s, t in b.scenarios.items()} ==
                                   {s: t.pack_hit for s, t in bodies[0].scenarios.items()} for b in bodies)


MAX_CHART_SCENARIOS = 40
"""Above this many scenarios the accuracy chart shows the whole run only."""


def charts(record: RunRecord) -> dict[str, Markup]:
    """The run's charts by name: accuracy (pack hit per scenario, recall vs synthesis, drawn once
    when the phases' bars are identical), styles
    (lexical vs paraphrase), latency (per lifecycle call), tokens and cost."""
    phases = list(record.totals)
    scenarios = sorted({sid for body in record.totals.values() for sid in body.scenarios})
    if len(scenarios) > MAX_CHART_SCENARIOS:  # a benchmark's thousand questions: the table and the probes have them
        scenarios = []
    per_phase = [Series(phase, _rates([record.totals[phase].scenarios.get(s) for s in scenarios]
                                      + [record.totals[phase].all], "pack_hit")) for phase in phases]
    if phases_identical(record):
        per_phase = per_phase[:1]
    styles = sorted({s for body in record.totals.values() for s in body.styles})
    last = record.totals[phases[-1]] if phases else None
    by_style = [Series(name, _rates([last.styles.get(s) if last else None for s in styles], pick))
                for name, pick in (("pack hit", "pack_hit"), ("extractive", "extractive"), ("model", "model"))]
    cost = [k for k in record.kpis if k.group == "cost"]
    return {
        "accuracy": rate_chart("Pack hit per scenario, recall vs synthesis (95% Wilson intervals)",
                               [*scenarios, "all"], per_phase),
        "styles": rate_chart(f"By question style ({phases[-1] if phases else DASH})", styles, by_style),
        "latency": latency_chart("Latency per lifecycle call (ms, log scale)",
                                 [Samples(str(label), ms) for label, ms in record.timings.items()]),
        "tokens": amount_chart("Tokens", [Amount(k.name, k.value, fmt_kpi(k.value, k.unit))
                                          for k in cost if k.unit == "tokens"]),
        "cost": amount_chart("Cost", [Amount(k.name, k.value, fmt_kpi(k.value, k.unit))
                                      for k in cost if k.unit == "usd"]),
    }


def build_html_view(record: RunRecord) -> dict[str, object]:
    """run.html's additions to :func:`memeval.report.view.build_view`."""
    probes = [probe_view(p) for p in record.probes]
    counts = {o: sum(1 for v in probes if o in v.outcomes) for o in OUTCOMES}
    return {"charts": charts(record), "phases_identical": phases_identical(record), "probe_views": probes,
            "outcome_names": OUTCOMES, "outcome_counts": counts, "passes": sum(1 for v in probes if not v.outcomes),
            "miss_groups": miss_groups(misses(record)), "misses_open": MISSES_OPEN, "probe_link": static_link}


MISSES_OPEN = 15
"""A group of the Misses table longer than this starts closed (one click opens it)."""
MISS_ORDER = ("pack", "invented", "answer")


def miss_groups(rows: Sequence[Row], most: int | None = None) -> list[tuple[str, list[Row], int]]:
    """The Misses table's rows grouped by what missed (pack, invented, answer), in that order:
    (what, the first ``most`` rows (all when None), how many there are)."""
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(row["what"], []).append(row)
    ordered = sorted(groups.items(), key=lambda g: MISS_ORDER.index(g[0]) if g[0] in MISS_ORDER else len(MISS_ORDER))
    return [(what, found[:most] if most is not None else found, len(found)) for what, found in ordered]


def static_link(probe_id: str) -> str:
    """A link within run.html that shows the misses and opens (and scrolls to) the probe."""
    return "#filter=misses&open=" + quote(probe_id, safe="")
