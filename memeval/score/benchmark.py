"""A benchmark's own grader applied to the model answers of a run, as the suite selects it.

``locomo-f1`` (LoCoMo's ``task_eval/evaluation.py``, no model needed) scores each answered
question in [0, 1]: token F1 with the official normaliser and Porter stemmer, the multi-answer
F1 for category 1, and the "not mentioned" phrase rule for category 5. It is also computed
beside mem0's J (``mem0-j``), so a LoCoMo run reports both, each under its own name in the
question's ``grades``. The judge graders (``longmemeval-judge``, ``mem0-j``) need judge calls:
:mod:`memeval.llm.bench_judge` applies them after this.
"""

from __future__ import annotations

from dataclasses import replace

from memeval.datasets.graders import LOCOMO_F1, locomo_score
from memeval.datasets.model import LOCOMO_IDS
from memeval.record import ProbeResult, RunRecord

APPLIED = ("locomo-f1",)
"""The graders :func:`apply_grader` computes as the suite's grader."""
BESIDE = {"mem0-j": LOCOMO_F1.name}
"""A judge grader and the grader computed beside it (as a second, separately named score)."""


def apply_grader(record: RunRecord) -> RunRecord:
    """``record`` with LoCoMo's F1 on every answered question (in ``grades``, and as
    ``grader_score`` when it is the suite's grader), when the suite's grader is ``locomo-f1``
    or has it beside (``mem0-j``); else ``record`` unchanged."""
    info = record.benchmark
    if info is None or (info.grader not in APPLIED and info.grader not in BESIDE):
        return record
    headline = info.grader in APPLIED
    return replace(record, probes=tuple(_f1(p, headline) for p in record.probes))


def _f1(probe: ProbeResult, headline: bool) -> ProbeResult:
    category = LOCOMO_IDS.get(probe.category or "")
    if category is None or probe.llm_answer is None:
        return probe
    gold = probe.expect[0] if probe.expect else None
    score = locomo_score(category, probe.llm_answer, gold)
    grades = {**(probe.grades or {}), LOCOMO_F1.name: score}
    if not headline:
        return replace(probe, grades=grades)
    reason = None if score is not None else "no gold answer in the file"
    return replace(probe, grader_score=score, grader_reason=reason, grades=grades)
