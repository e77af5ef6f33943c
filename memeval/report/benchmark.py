"""The benchmark section of run.md / run.html: the headline tables the field cites, from a record.

Without a model answer (no ``--llm``) the tables are pack-level (the gold answer is in the pack;
an abstention question's pack holds no trap) and say so: QA accuracy needs a model. With ``--llm``
they show the model answer as graded by memeval's grader. Each missed question is attributed:
``retrieval`` (its evidence, or without evidence ids its gold answer, is not in the pack),
``reading`` (it is in the pack, the answer is wrong) or ``judging`` (the judge and the matcher
disagree). Only the recall phase counts, so no question is counted twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from memeval.score.tables import LmeOutcome, LocomoOutcome, longmemeval_table, locomo_table
from memeval.record import BenchmarkInfo, ProbeResult, RunRecord
from memeval.report.errata import benchmark_ceiling
from memeval.score.benchmark import APPLIED

NO_MODEL = ("QA accuracy needs a model (run with --llm): without one these are pack-level checks, "
            "the gold answer in the pack (an abstention question: no trap answer in the pack)")


@dataclass(frozen=True)
class BenchmarkView:
    """What the templates show: the source, what is measured, the table rows and the misses."""

    info: BenchmarkInfo
    measure: str
    rows: tuple[tuple[str, str, str], ...]
    notes: tuple[str, ...]
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
    graded = model and info.grader in APPLIED
    rows, notes = _lme_rows(probes, model) if info.format == "longmemeval" else _locomo_rows(probes, model, graded, info.category_map)
    if not model:
        measure = NO_MODEL
    elif info.grader in APPLIED:
        measure = f"model answer, scored by {info.grader}"
    else:
        measure = "model answer, graded by memeval's matcher" + \
            (f" ({info.grader} is a judge grader, not applied by memeval run yet)" if info.grader != "memeval" else "")
    ceiling = benchmark_ceiling(asked_all)
    notes += (ceiling,) if ceiling else ()
    asked = len({(p.scenario, p.id) for p in asked_all})
    if asked < info.questions:
        notes += (f"{info.questions - asked} of the {info.questions} selected questions have no probe (a preference "
                  "rubric is graded by the LongMemEval judge only; see the import's x-unmapped); they are in no n.",)
    recalls = [p.evidence_recall for p in probes if p.evidence_recall is not None]
    recall = f"{100 * sum(recalls) / len(recalls):.1f}% (n = {len(recalls)})" if recalls else "– (no question cites evidence)"
    misses = tuple((p.id, p.category or "", kind) for p in probes if (kind := miss_kind(p, model)))
    return BenchmarkView(info, measure, rows, notes, recall, misses)


def _correct(p: ProbeResult, model: bool) -> bool | None:
    if not p.scored:
        return None
    if model:
        return p.llm_ok
    if p.abstain:
        return None if p.invented is None else not p.invented
    return p.hit


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _lme_rows(probes: list[ProbeResult], model: bool) -> tuple[tuple[tuple[str, str, str], ...], tuple[str, ...]]:
    table = longmemeval_table(LmeOutcome(p.id, p.category or "", _correct(p, model)) for p in probes)
    rows = [(name, _pct(r.value), str(r.n)) for name, r in table.per_type]
    rows += [(f"task-averaged (mean of {table.types_present} of 6 type means)", _pct(table.task_averaged), ""),
             ("overall", _pct(table.overall.value), str(table.overall.n)),
             ("abstention (_abs)", _pct(table.abstention.value), str(table.abstention.n))]
    notes = (f"{table.unscored} question(s) unscored; excluded from every n.",) if table.unscored else ()
    return tuple(rows), notes


def _locomo_rows(probes: list[ProbeResult], model: bool, graded: bool,
                 category_map: dict[str, str]) -> tuple[tuple[tuple[str, str, str], ...], tuple[str, ...]]:
    ids = {name: int(cid) for cid, name in category_map.items()}  # the record's own map, as the file numbers them
    outcomes = []
    for p in probes:
        ok = _correct(p, model)
        score = p.grader_score if graded else (None if ok is None else float(ok))
        outcomes.append(LocomoOutcome(p.id, ids.get(p.category or "", 0), score))
    table = locomo_table(outcomes)
    rows = [(m.name, _pct(m.mean), str(m.n)) for m in (*table.per_category, table.with_adversarial,
                                                        table.without_adversarial)]
    notes = (f"Policy: {table.policy}.",) + ((f"{table.unscored} question(s) unscored; excluded from every n.",)
                                             if table.unscored else ())
    return tuple(rows), notes


def miss_kind(p: ProbeResult, model: bool) -> str | None:
    """Why a scored question was missed (``retrieval``, ``reading``, ``judging``), None if not missed."""
    if not p.scored:
        return None
    if model and p.judged_ok is not None and p.llm_ok is not None and p.judged_ok != p.llm_ok:
        return "judging"
    if _correct(p, model) is not False:
        return None
    in_pack = p.evidence_recall == 1.0 if p.evidence_recall is not None else bool(p.hit)
    return "reading" if in_pack else "retrieval"
