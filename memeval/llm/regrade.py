"""``memeval regrade``: grade a recorded run again from its stored packs, without an engine.

Without ``llm`` or ``judge`` the stored extractive and model answers are re-graded with the
current grader; ``llm`` has a model answer every probe again, ``judge`` has an LLM judge grade
the model answers (and a benchmark's judge grader, when the suite selects one, judge them again). run.json, run.md and run.html go to ``out`` (default ``regrade/`` beside the
input); the input is never overwritten. The new record notes its source in ``regrade``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timezone

from memeval.errors import UsageError
from memeval.llm.answer import answer_record, summary_lines
from memeval.llm.bench_judge import bench_judge_record
from memeval.llm.judge import judge_record
from memeval.llm.settings import LlmSettings, resolve
from memeval.record import ProbeResult, RegradeNote, RunRecord
from memeval.report.files import read_run
from memeval.report.publish import publish
from memeval.score.derive import derive
from memeval.score.probe import grade_answer, probe_from_record

Echo = Callable[[str], None]


@dataclass(frozen=True)
class RegradeRequest:
    """What ``memeval regrade`` was asked for, as given on the command line."""

    run_json: str
    llm: bool = False
    judge: bool = False
    cache: bool = True
    cache_salt: str = ""
    out: str | None = None
    templates: str | None = None
    quiet: bool = False


def run_regrade(req: RegradeRequest, echo: Echo, show: Echo) -> int:
    """Regrade, publish and return the exit code (0). ``echo`` takes status lines, ``show`` the
    report (unless ``quiet``).

    Raises:
        UsageError: the input is not a run.json, ``out`` would overwrite it, the ``llm:``
            settings are unusable, or ``judge`` without model answers to judge.
    """
    record = read_run(req.run_json)
    folder = req.out or os.path.join(os.path.dirname(os.path.abspath(req.run_json)), "regrade")
    target = os.path.join(folder, "run.json")
    if os.path.exists(target) and os.path.samefile(target, req.run_json):
        raise UsageError(f"--out {folder}: would overwrite the input {req.run_json}; choose another folder")
    settings = None
    if req.llm or req.judge:
        llm = record.suite.resolved.get("llm", {})
        settings = resolve(llm if isinstance(llm, dict) else {}, os.environ, base_dir=os.path.dirname(record.suite.source),
                           judge=req.judge, cache=req.cache, salt=req.cache_salt,
                           dated=any(p.asked_at for p in record.probes))
    record = regrade(record, settings, answer=req.llm, source=req.run_json)
    if settings is not None and record.answerer is not None:
        for line in summary_lines(record.answerer, record.benchmark.judge if record.benchmark else None):
            echo(line)
    report = publish(record, folder, req.templates)
    if not req.quiet:
        show(report)
    echo(f"wrote {target}, run.md and run.html")
    return 0


def regrade_record(record: RunRecord) -> RunRecord:
    """``record`` with its stored extractive and model answers graded again by the current
    grader (no model call), re-derived."""
    return derive(replace(record, probes=tuple(_regraded(p) for p in record.probes)))


def _regraded(probe: ProbeResult) -> ProbeResult:
    if not probe.scored:
        return probe
    spec = probe_from_record(probe)
    return replace(probe, answer_ok=grade_answer(spec, probe.answer, extractive=True),
                   llm_ok=None if probe.llm_answer is None else grade_answer(spec, probe.llm_answer))


def regrade(record: RunRecord, settings: LlmSettings | None, *, answer: bool, source: str) -> RunRecord:
    """Re-answer every probe (``answer``, with ``settings``), else re-grade the stored answers
    and, when ``settings`` carry a judge, judge them. The new record notes the input in ``regrade``.

    Raises:
        UsageError: judging a run that has no model answers.
    """
    if answer and settings is not None:
        record = answer_record(record, settings)
    else:
        record = regrade_record(record)
        if settings is not None and settings.judge is not None:
            if record.answerer is None:
                raise UsageError(f"{source}: --judge grades model answers and this run has none; add --llm")
            record = bench_judge_record(record, settings)  # a benchmark's judge grader (if any) judges again
            record = judge_record(record, settings.judge, settings.cache, settings.judge_repeats)
    judged = settings is not None and settings.judge is not None
    note = RegradeNote(source, datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), answer, judged)
    return replace(record, regrade=note)
