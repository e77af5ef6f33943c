"""The benchmark section of run.md / run.html: the headline tables the field cites, from a record.

Without a model answer (no ``--llm``) the tables are pack-level (the gold answer is in the pack;
an abstention question's pack holds no trap) and say so: QA accuracy needs a model. With ``--llm``
they show the model answer as the suite's grader scores it (a benchmark's computed grader, or
its judge with any computed grader the benchmark pairs with it as a second table, each named by
its grader); else memeval's matcher. Each table is the benchmark's own
(:meth:`~memeval.benchmarks.base.Benchmark.table`). Each missed question is attributed: ``judging`` (the judge, the benchmark's or
``--judge``, and memeval's substring matcher disagree), else ``retrieval`` (its evidence, or
without evidence ids its gold answer, is not in the pack) or ``reading`` (it is in the pack, the
answer is wrong). Only the recall phase counts, so no question is counted twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from memeval.benchmarks import AnyBenchmark, find
from memeval.benchmarks.base import Score, ScoreTable
from memeval.record import BenchmarkInfo, BenchmarkJudge, Consistency, ProbeResult, RunRecord
from memeval.report.errata import benchmark_ceiling
from memeval.score.probe import judged_only
from memeval.stats.basic import Rate

NO_MODEL = ("QA accuracy needs a model (run with --llm): without one these are pack-level checks, "
            "the gold answer in the pack (an abstention question: no trap answer in the pack)")
Measure = tuple[str, str | None, Score]  # a table's title, its grader (None: pack-level or matcher) and its score


@dataclass(frozen=True)
class BenchmarkView:
    """What the templates show: the source and how the benchmark names itself and its
    categories, what is measured, the tables, the judge and the misses."""

    info: BenchmarkInfo
    title: str
    category_label: str
    category_source: str | None
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
    bench = find(info.format)
    measure, scores = _measures(info, bench, model)
    tables = tuple(bench.table(probes, title, grader, score) for title, grader, score in scores) if bench else ()
    asked = len({(p.scenario, p.id) for p in asked_all})
    ceiling = benchmark_ceiling(asked_all)
    notes: tuple[str, ...] = ((ceiling,) if ceiling else ()) + _judged_note(probes, model, info, bench)
    if bench is None:
        notes += (f"The benchmark {info.format!r} is not installed here: its tables cannot be shown.",)
    if asked < info.questions:
        notes += (f"{info.questions - asked} of the {info.questions} selected questions have no probe (see the import's "
                 "x-unmapped for why each could not be mapped); they are in no n.",)
    recalls = [p.evidence_recall for p in probes if p.evidence_recall is not None]
    recall = f"{100 * sum(recalls) / len(recalls):.1f}% (n = {len(recalls)})" if recalls else "– (no question cites evidence)"
    misses = tuple((p.id, p.category or "", kind) for p in probes if (kind := miss_kind(p, model, info)))
    judge = judge_lines(info.judge) if info.judge and model else ()
    title, label = (bench.title, bench.category_label) if bench else (info.format, "category")
    return BenchmarkView(info, title, label, bench.category_source if bench else None, measure, tables, notes, judge,
                         recall, misses)


def _judged_note(probes: list[ProbeResult], model: bool, info: BenchmarkInfo,
                 bench: AnyBenchmark | None) -> tuple[str, ...]:
    """What the judged-only questions (a rubric as gold) need before they are scored: a model
    and the benchmark's judge grader; nothing once the judge ran."""
    judged = [p for p in probes if p.scored and judged_only(p)]
    if not judged or (model and info.judge is not None):
        return ()
    judge = next(iter(bench.judges), "a judge") if bench is not None else "a judge"
    need = f"a model (run with --llm) and the {judge} grader" if not model else \
        f"the {judge} grader (this run's is {info.grader})"
    types = ", ".join(sorted({p.category or "uncategorised" for p in judged}))
    return (f"{types}: {len(judged)} question(s) judged only (the gold is a rubric, nothing a pack can hold); they need "
            f"{need}, and are in no n until then.",)


def _measures(info: BenchmarkInfo, bench: AnyBenchmark | None, model: bool) -> tuple[str, list[Measure]]:
    """What the tables measure, and each table's title, grader and per-question score."""
    if not model:
        return NO_MODEL, [("pack-level check", None, _pack_level)]
    computed = bench.computed if bench is not None else {}
    judges = bench.judges if bench is not None else {}
    if info.grader in computed:
        grader = computed[info.grader]
        return f"model answer, scored by {info.grader}", [(f"{grader.measure} ({info.grader})", info.grader,
                                                           _grade(info.grader))]
    if info.judge is not None and info.grader in judges:
        judged: Measure = (f"{judges[info.grader].measure} ({info.grader})", info.grader, _grade(info.grader))
        second = bench.beside.get(info.grader) if bench is not None else None
        if second is not None and second in computed:
            return (f"model answer, judged by {info.grader} and scored by {second} (two separately named scores)",
                    [(f"{computed[second].measure} ({second})", second, _grade(second)), judged])
        return f"model answer, judged by {info.grader}", [judged]
    missing = f" ({info.grader} did not run: no judge record)" if info.grader != "memeval" else ""
    return "model answer, graded by memeval's matcher" + missing, [("accuracy (memeval's matcher)", None, _matched)]


def _grade(name: str) -> Score:
    return lambda p: (p.grades or {}).get(name) if p.scored else None


def _matched(p: ProbeResult) -> float | None:
    return None if not p.scored or p.llm_ok is None else float(p.llm_ok)


def _pack_level(p: ProbeResult) -> float | None:
    if not p.scored:
        return None
    ok = (None if p.invented is None else not p.invented) if p.abstain else p.hit
    return None if ok is None else float(ok)


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
    if info is not None and info.judge is not None and p.grader_score is not None:
        return p.grader_score >= 1.0
    return p.judged_ok
