"""The benchmark section of run.md / run.html: the headline tables the field cites, from a record.

Without a model answer (no ``--llm``) the tables are pack-level (the gold answer is in the pack;
an abstention question's pack holds no trap) and say so: QA accuracy needs a model. With ``--llm``
they show the model answer as the suite's grader scores it: LongMemEval's judge, LoCoMo's F1,
and on LoCoMo with ``mem0-j`` a second table, J, beside F1 (each named by its grader); else
memeval's matcher. Each missed question is attributed: ``judging`` (the judge, the benchmark's or
``--judge``, and memeval's substring matcher disagree), else ``retrieval`` (its evidence, or
without evidence ids its gold answer, is not in the pack) or ``reading`` (it is in the pack, the
answer is wrong). Only the recall phase counts, so no question is counted twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memeval.datasets.judge import LOCOMO_J
from memeval.record import BenchmarkInfo, BenchmarkJudge, Consistency, ProbeResult, RunRecord
from memeval.report.errata import benchmark_ceiling
from memeval.score.benchmark import APPLIED
from memeval.score.probe import judged_only
from memeval.stats.basic import Rate
from memeval.score.tables import LmeOutcome, LocomoOutcome, locomo_table, longmemeval_table, pct

NO_MODEL = ("QA accuracy needs a model (run with --llm): without one these are pack-level checks, "
            "the gold answer in the pack (an abstention question: no trap answer in the pack)")
F1 = "locomo-f1"
Row = tuple[str, str, str]
Score = Callable[[ProbeResult], float | None]


@dataclass(frozen=True)
class ScoreTable:
    """One table: what it scores (its title), its rows (name, value, n) and notes under it."""

    title: str
    rows: tuple[Row, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class BenchmarkView:
    """What the templates show: the source, what is measured, the tables, the judge and the misses."""

    info: BenchmarkInfo
    measure: str
    tables: tuple[ScoreTable, ...]
    notes: tuple[str, ...]
    judge: tuple[str, ...]
    evidence_recall: str
    misses: tuple[tuple[str, str, str], ...]


def benchmark_view(record: RunRecord) -> BenchmarkView | None:
    """The benchmark section for ``record``, or None when it is not a benchmark run."""
    info = record.benchmark
    if info is None:
        return None
    asked_all = [p for p in record.probes if p.phase == "recall" and p.category is not None]
    probes = [p for p in asked_all if not p.disputed]  # disputed gold is scored apart (memeval.report.errata)
    model = record.answerer is not None
    measure, scores = _measures(info, model)
    tables = tuple(_lme(probes, title, score) if info.format == "longmemeval" else
                   _locomo(probes, title, score, info.category_map, title.startswith("J ")) for title, score in scores)
    asked = len({(p.scenario, p.id) for p in asked_all})
    ceiling = benchmark_ceiling(asked_all)
    notes: tuple[str, ...] = ((ceiling,) if ceiling else ()) + _judged_note(probes, model, info)
    if asked < info.questions:
        notes += (f"{info.questions - asked} of the {info.questions} selected questions have no probe (see the import's "
                 "x-unmapped: an empty answer, a LoCoMo row without an answer); they are in no n.",)
    recalls = [p.evidence_recall for p in probes if p.evidence_recall is not None]
    recall = f"{100 * sum(recalls) / len(recalls):.1f}% (n = {len(recalls)})" if recalls else "– (no question cites evidence)"
    misses = tuple((p.id, p.category or "", kind) for p in probes if (kind := miss_kind(p, model, info)))
    judge = judge_lines(info.judge) if info.judge and model else ()
    return BenchmarkView(info, measure, tables, notes, judge, recall, misses)


def _judged_note(probes: list[ProbeResult], model: bool, info: BenchmarkInfo) -> tuple[str, ...]:
    """What the judged-only questions (a preference rubric as gold) need before they are scored:
    a model and the judge grader; nothing once the judge ran."""
    judged = [p for p in probes if p.scored and judged_only(p)]
    if not judged or (model and info.judge is not None):
        return ()
    need = "a model (run with --llm) and the longmemeval-judge grader" if not model else \
        f"the longmemeval-judge grader (this run's is {info.grader})"
    types = ", ".join(sorted({p.category or "uncategorised" for p in judged}))
    return (f"{types}: {len(judged)} question(s) judged only (the gold is a rubric, nothing a pack can hold); they need "
            f"{need}, and are in no n until then.",)


def _measures(info: BenchmarkInfo, model: bool) -> tuple[str, list[tuple[str, Score]]]:
    """What the tables measure, and each table's title and per-question score."""
    if not model:
        return NO_MODEL, [("pack-level check", _pack_level)]
    if info.grader in APPLIED:
        return f"model answer, scored by {info.grader}", [(f"F1 ({F1})", _grade(F1))]
    if info.judge is not None:
        judged = _grade(info.grader)
        if info.grader == LOCOMO_J.name:
            return (f"model answer, judged by {info.grader} and scored by {F1} (two separately named scores)",
                    [(f"F1 ({F1})", _grade(F1)), (f"J ({info.grader})", judged)])
        return f"model answer, judged by {info.grader}", [(f"accuracy ({info.grader})", judged)]
    missing = f" ({info.grader} did not run: no judge record)" if info.grader != "memeval" else ""
    return "model answer, graded by memeval's matcher" + missing, [("accuracy (memeval's matcher)", _matched)]


def _grade(name: str) -> Score:
    return lambda p: (p.grades or {}).get(name) if p.scored else None


def _matched(p: ProbeResult) -> float | None:
    return None if not p.scored or p.llm_ok is None else float(p.llm_ok)


def _pack_level(p: ProbeResult) -> float | None:
    if not p.scored:
        return None
    ok = (None if p.invented is None else not p.invented) if p.abstain else p.hit
    return None if ok is None else float(ok)


def _lme(probes: list[ProbeResult], title: str, score: Score) -> ScoreTable:
    outcomes = [LmeOutcome(p.id, p.category or "", None if (s := score(p)) is None else s >= 1.0) for p in probes]
    table = longmemeval_table(outcomes)
    rows = [(name, pct(r.value), str(r.n)) for name, r in table.per_type]
    rows += [(f"task-averaged (mean of {table.types_present} of 6 type means)", pct(table.task_averaged), ""),
             ("overall", pct(table.overall.value), str(table.overall.n)),
             ("abstention (_abs)", pct(table.abstention.value), str(table.abstention.n))]
    notes = (f"{table.unscored} question(s) unscored; excluded from every n.",) if table.unscored else ()
    return ScoreTable(title, tuple(rows), notes)


def _locomo(probes: list[ProbeResult], title: str, score: Score, category_map: dict[str, str],
            skips_5: bool) -> ScoreTable:
    ids = {name: int(cid) for cid, name in category_map.items()}  # the record's own map, as the file numbers them
    outcomes = [LocomoOutcome(p.id, ids.get(p.category or "", 0), score(p)) for p in probes]
    skipped = sum(1 for o in outcomes if o.category == 5) if skips_5 else 0
    table = locomo_table(o for o in outcomes if not (skips_5 and o.category == 5))
    shown = [m for m in table.per_category if not (skips_5 and m.name.startswith("5 "))]
    rows = [(m.name, pct(m.mean), str(m.n)) for m in shown]
    rows += [(table.without_adversarial.name, pct(table.without_adversarial.mean), str(table.without_adversarial.n))]
    if not skips_5:
        rows.insert(len(shown), (table.with_adversarial.name, pct(table.with_adversarial.mean),
                                 str(table.with_adversarial.n)))
    policy = table.policy if not skips_5 else \
        f"mem0's J does not score category 5 (adversarial): {skipped} question(s) skipped, in no n"
    notes: tuple[str, ...] = (f"Policy: {policy}.",)
    if table.unscored:
        notes += (f"{table.unscored} question(s) unscored; excluded from every n.",)
    return ScoreTable(title, tuple(rows), notes)


def judge_lines(judge: BenchmarkJudge) -> tuple[str, ...]:
    """The benchmark judge as the report states it: model asked and served, sampling, counts,
    each template by name, source and sha256, and its self-consistency when repeated."""
    served = ", ".join(judge.served or ()) or "not reported by the endpoint"
    limit = "not sent" if judge.sampling.max_tokens is None else str(judge.sampling.max_tokens)
    lines = [f"Judge `{judge.grader.name}` v{judge.grader.version}: model `{judge.model}` asked (upstream's: "
             f"`{judge.official_model}`), served as {served}; temperature {judge.sampling.temperature:g}, max_tokens "
             f"{limit}{', JSON reply' if judge.sampling.json_reply else ''}; {judge.judged} of {judge.questions} answers "
             f"judged, {judge.skipped} skipped by the grader's rule, {judge.no_verdict} without a verdict; "
             f"{judge.calls} calls ({judge.cache.hits} from the cache)."]
    by_text: dict[tuple[str, str, str], list[str]] = {}
    for t in judge.templates:
        by_text.setdefault((t.name, t.source, t.sha256), []).append(t.key)
    lines += [f"Template `{name}` ({source}, sha256 `{sha[:12]}`) for {', '.join(keys)}."
              for (name, source, sha), keys in by_text.items()]
    if judge.consistency:
        lines.append(f"Self-consistency: {fmt_consistency(judge.consistency)}.")
    if judge.stopped:
        lines.append(judge.stopped)
    return tuple(lines)


def fmt_consistency(c: Consistency) -> str:
    """A judge's agreement with itself over repeats: the unanimity rate and Fleiss' κ, with n."""
    kappa = "–" if c.fleiss_kappa is None else f"{c.fleiss_kappa:.2f}"
    return f"{Rate(c.unanimous, c.n).text()} of answers judged alike in all {c.repeats} judgings, Fleiss' κ {kappa} (n={c.n})"


def miss_kind(p: ProbeResult, model: bool, info: BenchmarkInfo | None = None) -> str | None:
    """Why a scored question was missed (``retrieval``, ``reading``, ``judging``), None if not
    missed. ``judging``: a judge (the benchmark's judge grader, or ``--judge``) and memeval's
    matcher disagree on the answer. Otherwise a question is missed when the judge's verdict, else
    the matcher's (also under F1, which has no pass mark), calls the answer wrong."""
    if not p.scored:
        return None
    judged = _judge_verdict(p, info)
    if model and judged is not None and p.llm_ok is not None and judged != p.llm_ok:
        return "judging"
    if model:
        headline = judged if judged is not None else p.llm_ok
    else:
        ok = _pack_level(p)
        headline = None if ok is None else ok >= 1.0
    if headline is not False:
        return None
    in_pack = p.evidence_recall == 1.0 if p.evidence_recall is not None else bool(p.hit)
    return "reading" if in_pack else "retrieval"


def _judge_verdict(p: ProbeResult, info: BenchmarkInfo | None) -> bool | None:
    """The benchmark judge's verdict when it judged the question, else ``--judge``'s."""
    if info is not None and info.judge is not None and p.grader_score is not None and info.grader != F1:
        return p.grader_score >= 1.0
    return p.judged_ok
