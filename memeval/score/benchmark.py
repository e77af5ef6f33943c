"""A benchmark's own grader applied to the model answers of a run, as the suite selects it.

``locomo-f1`` (LoCoMo's ``task_eval/evaluation.py``, no model needed) scores each answered
question in [0, 1]: token F1 with the official normaliser and Porter stemmer, the multi-answer
F1 for category 1, and the "not mentioned" phrase rule for category 5. The judge graders
(``longmemeval-judge``, ``mem0-j``) need judge calls and are not applied here: their questions
keep ``grader_score`` null and the report says which grader the accuracy comes from.
"""

from __future__ import annotations

from dataclasses import replace

from memeval.datasets.graders import locomo_score
from memeval.datasets.model import LOCOMO_CATEGORIES
from memeval.record import ProbeResult, RunRecord

_IDS = {name: cid for cid, name in LOCOMO_CATEGORIES.items()}
APPLIED = ("locomo-f1",)
"""The graders :func:`apply_grader` computes."""


def apply_grader(record: RunRecord) -> RunRecord:
    """``record`` with ``grader_score`` on every answered benchmark question, when the suite's
    grader is one this module computes; else ``record`` unchanged."""
    info = record.benchmark
    if info is None or info.grader not in APPLIED:
        return record
    return replace(record, probes=tuple(_f1(p) for p in record.probes))


def _f1(probe: ProbeResult) -> ProbeResult:
    category = _IDS.get(probe.category or "")
    if category is None or probe.llm_answer is None:
        return probe
    gold = probe.expect[0] if probe.expect else None
    return replace(probe, grader_score=locomo_score(category, probe.llm_answer, gold))
