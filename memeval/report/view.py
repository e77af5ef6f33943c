"""The view model of a run record: every number already formatted, so templates hold no logic.

Formats: a rate is ``NN% (k/n)``, or ``–`` when n = 0; a missing value is ``–``, never 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memeval.record import Answerer, CacheInfo, Count, Kpi, ModelSide, ProbeResult, RateValue, RunRecord, Totals, Unit
from memeval.report.errata import errata_lines
from memeval.report.served import answered_by
from memeval.score.setup import fingerprint, setup_of
from memeval.stats.basic import Rate
from memeval.util.suggest import counted

if TYPE_CHECKING:
    from memeval.report.benchmark import BenchmarkView

DASH = "–"
Row = dict[str, str]
"""One table row of the template context: every value already a string."""


def fmt_rate(r: RateValue | Count | None) -> str:
    """``NN% (k/n)`` from a k-of-n value, ``–`` for n = 0 (see :meth:`Rate.text`)."""
    return Rate(r.k, r.n).text() if r else DASH


def fmt_num(value: float | None, digits: int = 2) -> str:
    """A number with ``digits`` decimals, ``–`` for None."""
    return DASH if value is None else f"{value:.{digits}f}"


def fmt_kpi(v: float | None, unit: Unit) -> str:
    """A KPI value in its unit."""
    if v is None:
        return DASH
    if unit == "pct":
        return f"{v:.1f}%"
    if unit == "points":
        return f"{v:+.1f} pp"
    if unit == "usd":
        return f"${v:.4f}"
    if unit == "ms":
        return f"{v:.2f} ms"
    if unit == "score":
        return f"{v:.3f}"
    return f"{v:g}"


def unsupported_text(capability: str) -> str:
    """How a KPI the engine cannot have reads: never a number."""
    return f"unsupported (no {capability})"


def fmt_kpi_value(k: Kpi) -> str:
    """The KPI's value, or "unsupported (no CAPABILITY)" for a KPI the engine cannot have."""
    return unsupported_text(k.unsupported) if k.unsupported else fmt_kpi(k.value, k.unit)


def fmt_ci(k: Kpi) -> str:
    """The KPI's 95% interval in its unit, ``–`` when it has none."""
    if not k.ci95:
        return DASH
    return f"{fmt_bound(k.ci95[0], k.unit)} – {fmt_bound(k.ci95[1], k.unit)}"


def fmt_bound(v: float, unit: Unit) -> str:
    """An interval's end in its unit; means of counts and tokens to one decimal, as their values
    are recorded, not to six significant digits."""
    return f"{v:.1f}" if unit in ("count", "tokens") else fmt_kpi(v, unit)


def stuffing_line(record: RunRecord) -> str | None:
    """The "not a retrieval test" warning when the run's packs held more than the threshold of
    their haystacks, else None."""
    s = record.stuffing
    if s is None or not s.flagged:
        return None
    return (f"Not a retrieval test: the packs held on average {100 * s.mean_share:.0f}% of their haystack "
            f"(the tokens written to the probe's tenant; threshold {100 * s.threshold:.0f}%, "
            f"{s.over} of {s.probes} probes above it).")


def depth_line(record: RunRecord) -> str | None:
    """The retrieval depth beside the haystack: what the pack policy allows (from the setup)
    and what the packs held (from the stuffing check); None when neither is known."""
    depth, s = setup_of(record).retrieval, record.stuffing
    parts = []
    if depth is not None:
        share = DASH if depth.budget_share is None else f"{100 * depth.budget_share:.0f}%"
        parts.append(f"a full pack ({depth.budget_tokens} tokens, {depth.pack_items} items) can hold {share} of the mean "
                     f"haystack ({depth.tokens_stored:g} tokens, {depth.items_stored:g} items stored per probe)")
    if s is not None and s.tokens_retrieved is not None:
        items = "" if s.items_retrieved is None else f" and {s.items_retrieved:g} items"
        parts.append(f"the packs held on average {s.tokens_retrieved:g} tokens{items} of {s.tokens_stored:g} tokens "
                     f"and {s.items_stored:g} items stored")
    return f"Retrieval depth: {'; '.join(parts)}." if parts else None


def noise_line(record: RunRecord) -> str | None:
    """The haystack noise the suite wrote before each scenario's own items, in one sentence."""
    noise = record.setup.noise if record.setup else None
    if noise is None:
        return None
    source = f"drawn from `{noise.file}`" if noise.file else "generated routine office notes"
    return (f"Haystack noise: {noise.tokens:,} tokens of distractors per tenant ({source}, seed {noise.seed}), "
            f"written before each scenario's own items.")


def fmt_cluster(k: Kpi) -> str:
    """The KPI's cluster bootstrap interval with its number of clusters (``lo – hi (5 scenarios)``),
    ``–`` when the KPI has none, the clusters alone when there were too few."""
    c = k.clustered
    if c is None:
        return DASH
    count = counted(c.clusters, c.unit)
    if c.ci95 is None:
        return f"{DASH} ({count})"
    return f"{fmt_bound(c.ci95[0], k.unit)} – {fmt_bound(c.ci95[1], k.unit)} ({count})"


def accuracy_row(name: str, phase: str, t: Totals) -> Row:
    """One row of the accuracy table."""
    return {"name": name, "phase": phase, "hit": fmt_rate(t.pack_hit), "extractive": fmt_rate(t.extractive),
            "model": fmt_rate(t.model), "captured": fmt_rate(t.captured),
            "mrr": fmt_num(t.mrr.value) + (f" (n={t.mrr.n})" if t.mrr.n else ""),
            "fresh": fmt_rate(t.fresh_first), "leaks": fmt_rate(t.leaks), "abstained": fmt_rate(t.abstained),
            "unscored": str(t.errored + t.unsupported)}


def build_view(record: RunRecord) -> dict[str, object]:
    """Everything the run templates show, formatted (``r`` is the typed record itself)."""
    accuracy, styles = [], []
    for phase, body in record.totals.items():
        for sid, t in body.scenarios.items():
            accuracy.append(accuracy_row(sid, phase, t))
        accuracy.append(accuracy_row("**all**", phase, body.all))
        for style, t in body.styles.items():
            styles.append({**accuracy_row(style, phase, t), "n": str(t.scored)})
    latency = [{"label": str(label), "n": row.n, "p50": fmt_num(row.p50), "p95": fmt_num(row.p95),
                "p99": fmt_num(row.p99), "max": fmt_num(row.max)} for label, row in record.latency.items()]
    kpis = [{"group": k.group, "name": k.name, "value": fmt_kpi_value(k), "n": k.n, "ci": fmt_ci(k),
             "cluster": fmt_cluster(k),
             "better": {"up": "↑", "down": "↓"}.get(k.better or "", "")} for k in record.kpis]
    return {
        "r": record, "accuracy": accuracy, "styles": styles, "latency": latency, "kpis": kpis,
        "misses": misses(record),
        "unscored": [p for p in record.probes if not p.scored],
        "sha": record.suite.sha256[:12],
        "setup": fingerprint(setup_of(record)),
        "stuffing": stuffing_line(record),
        "errata": errata_lines(record.errata),
        "depth": depth_line(record),
        "noise": noise_line(record),
        "answerer": answerer_rows(record.answerer),
        "benchmark": _benchmark(record),
    }


def misses(record: RunRecord) -> list[Row]:
    """The Misses table: one row per scored probe that missed, in run order."""
    return [_miss(p) for p in record.probes if _is_miss(p)]


def _is_miss(p: ProbeResult) -> bool:
    if not p.scored or not (p.expect or p.abstain):  # a leak-only probe is never a miss: its leaks count as leaks
        return False
    return bool(p.invented) if p.abstain else not p.hit or p.answer_ok is False or p.llm_ok is False


def _miss(p: ProbeResult) -> Row:
    answer = (p.answer or DASH).replace("|", "\\|")
    what = "invented" if p.abstain else ("pack" if not p.hit else "answer")
    return {"scenario": p.scenario, "phase": p.phase, "id": p.id, "style": p.style, "what": what,
            "rank": str(p.rank) if p.rank else DASH, "answer": answer[:90] + ("…" if len(answer) > 90 else ""),
            "model": (p.llm_answer or DASH).replace("|", "\\|")[:90]}


def _cache_use(cache: CacheInfo) -> str:
    """Cross-run hits, in-run reuses (when the record counts them apart) and misses."""
    reused = "" if cache.reused is None else f", {cache.reused} reused in-run"
    hits = "hits" if cache.reused is None else "cross-run hits"
    return f"{cache.hits} {hits}{reused}, {cache.misses} misses" + (f", salt `{cache.salt}`" if cache.salt else "")


def _usd(value: float | None) -> str:
    return DASH if value is None else f"${value:.4f}"


def _model_rows(a: ModelSide, role: str) -> list[tuple[str, str]]:
    prompt, sampling = a.prompt, a.sampling
    return [(role, f"{answered_by(a)} at {a.endpoint}"),
            (f"{role} prompt", f"`{prompt.name}` (sha256 `{prompt.sha256[:12]}`), temperature "
                               f"{sampling.temperature:g}, max_tokens {sampling.max_tokens}")]


def answerer_rows(a: Answerer | None) -> list[tuple[str, str]]:
    """(label, value) rows describing the model answerer and its judge; empty without ``--llm``."""
    if not a:
        return []
    spent, cache = a.incurred, a.cache
    rows = _model_rows(a, "Model") + [
        ("Answered", f"{a.answered} of {a.probes} probes ({a.failed} failed, {a.not_answered} not answered)"),
        ("Tokens of the answers", f"{fmt_num(a.tokens, 0)} ({fmt_num(a.prompt_tokens, 0)} prompt + "
                                  f"{fmt_num(a.completion_tokens, 0)} completion)"),
        ("Cost of the answers", _usd(a.cost_usd)),
        ("Spent by this run", f"{spent.calls} calls, {spent.requests} requests, {spent.retries} retries, "
                              f"{fmt_num(spent.tokens, 0)} tokens, {_usd(spent.cost_usd)}"),
        ("Cache", _cache_use(cache) if cache.enabled else "off"),
    ]
    if a.stopped:
        rows.append(("Stopped", a.stopped))
    judge = a.judge
    if judge:
        lenient = judge.leniency
        wrongly = "; ".join(f"{x.id}: \"{x.answer}\" ({x.kind})" for x in lenient.accepted)
        rows += _model_rows(judge, "Judge") + [
            ("Judge accepts", fmt_rate(judge.accepted)),
            ("Judge agrees with the grader", fmt_rate(Count(judge.agreement.agree, judge.agreement.n))
             + f", Cohen's κ {fmt_num(judge.agreement.kappa, 2)} (n={judge.agreement.n})"),
            ("Leniency check (planted wrong answers)",
             f"rejected {fmt_rate(Count(lenient.rejected, lenient.n))}, false acceptance "
             f"{fmt_rate(Count(lenient.n - lenient.rejected, lenient.n))}"
             + (f"; accepted {wrongly}" if wrongly else "")),
            ("Judge cost", f"{judge.calls} calls, {fmt_num(judge.tokens, 0)} tokens, {_usd(judge.cost_usd)}"),
        ]
        if judge.consistency:
            from memeval.report.benchmark import fmt_consistency  # one wording for both judges

            rows.append(("Judge self-consistency", fmt_consistency(judge.consistency)))
        if judge.stopped:
            rows.append(("Judge stopped", judge.stopped))
    return [(label, value.replace("|", "\\|")) for label, value in rows]


def _benchmark(record: RunRecord) -> "BenchmarkView | None":
    """The benchmark section's view, or None; its tables (and the benchmarks' category names)
    load only for a benchmark's run."""
    if record.benchmark is None:
        return None
    from memeval.report.benchmark import benchmark_view

    return benchmark_view(record)
