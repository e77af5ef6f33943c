"""A benchmark's computed grader applied to the model answers of a run, as the suite selects it.

A computed grader (one that needs no model, such as LoCoMo's ``locomo-f1``) scores each answered
question in [0, 1]. It is the headline when the suite selects it, and a second, separately named
score beside a judge grader the benchmark pairs it with (LoCoMo: F1 beside mem0's J), each under
its own name in the question's ``grades``. Judge graders need judge calls:
:mod:`memeval.llm.bench_judge` applies them after this.
"""

from __future__ import annotations

from dataclasses import replace

from memeval.benchmarks import find
from memeval.benchmarks.base import ComputedGrader
from memeval.record import ProbeResult, RunRecord


def apply_grader(record: RunRecord) -> RunRecord:
    """``record`` with the computed grader's score on every answered question it applies to (in
    ``grades``, and as ``grader_score`` when it is the suite's grader), when the suite's grader
    is computed or has a computed grader beside it; else ``record`` unchanged."""
    info = record.benchmark
    bench = find(info.format) if info is not None else None
    if info is None or bench is None:
        return record
    headline = info.grader in bench.computed
    name = info.grader if headline else bench.beside.get(info.grader)
    grader = bench.computed.get(name) if name is not None else None
    if grader is None:
        return record
    return replace(record, probes=tuple(_graded(p, grader, headline) for p in record.probes))


def _graded(probe: ProbeResult, grader: ComputedGrader, headline: bool) -> ProbeResult:
    if probe.llm_answer is None:
        return probe
    graded = grader.grade(probe)
    if graded is None:
        return probe
    grades = {**(probe.grades or {}), grader.info.name: graded.score}
    if not headline:
        return replace(probe, grades=grades)
    return replace(probe, grader_score=graded.score, grader_reason=graded.reason, grades=grades)
