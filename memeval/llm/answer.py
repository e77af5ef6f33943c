"""Model answers for a run record: every scored probe is answered from its stored pack.

:func:`answer_record` returns a new record where, per scored probe (both phases): ``llm_answer``, ``llm_ok`` (the
grader of :mod:`memeval.score.probe`), ``llm_tokens`` (prompt + completion), ``llm_cost_usd``,
``llm_cached`` and ``llm_error``. A probe the model did not answer keeps ``llm_ok`` null, never
false: its call failed (``llm_error`` says why) or the endpoint refused earlier and the run
stopped asking. A probe with an asking time (``asked_at``: a benchmark's question date) is
asked with it (the template variable ``asked_at``, e.g. "Tuesday, 30 May 2023, 23:17", which
``answer-dated-v1`` states as "Today is …"); an undated probe's variables, and so its cache key,
are what they always were. The record gets its ``answerer`` (below), is graded by the suite's
benchmark grader (:mod:`memeval.benchmarks.grading`, then a judge grader's calls:
:mod:`memeval.llm.bench_judge`), is judged when asked (:mod:`memeval.llm.judge`) and has its
totals and KPIs re-derived.

``answerer``: the endpoint (no credentials), model, prompt name and sha256, sampling,
concurrency, timeout and retries; ``cache`` (enabled, salt, hits, misses); ``incurred`` (what this
run's HTTP calls cost: calls, requests, retries, tokens, USD); and, over the answers themselves
whether fresh or cached: ``calls`` (answers), ``prompt_tokens``, ``completion_tokens``,
``tokens``, ``cost_usd`` (null when any answer's cost is unknown or nothing was answered);
``probes``, ``answered``, ``failed``, ``not_answered``, ``stopped`` (one line, or null) and
``judge`` (null unless judged).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime

from memeval.llm.bench_judge import applies, bench_judge_record
from memeval.llm.client import Batch, Reply, spent
from memeval.llm.judge import judge_record
from memeval.report.served import answered_by
from memeval.llm.settings import LlmSettings
from memeval.record import AnswerCall, Answerer, BenchmarkJudge, JudgeMark, ModelSide, ProbeResult, RunRecord
from memeval.record.codec import from_json
from memeval.benchmarks.grading import apply_grader
from memeval.score.derive import derive
from memeval.score.probe import grade_answer, probe_from_record

NOT_ASKED = "not answered: the answerer stopped"


def is_target(probe: ProbeResult) -> bool:
    """Whether a model answers this probe: scored, with a pack, and with an answer to grade (a
    judged probe's by its judge grader; a leak-only probe has none: asking would cost a call
    that counts for nothing)."""
    return probe.scored and probe.pack is not None and bool(probe.expect or probe.abstain or probe.gold)


def answer_record(record: RunRecord, settings: LlmSettings) -> RunRecord:
    """``record`` answered, graded (and judged, when ``settings.judge`` is set) and re-derived.
    Never raises for a refusing or failing endpoint: see ``answerer.stopped`` and ``llm_error``."""
    last = record
    for last in answer_steps(record, settings):
        pass
    return derive(last)


def answer_steps(record: RunRecord, settings: LlmSettings) -> Iterator[RunRecord]:
    """The record after each stage: answered (and graded by a benchmark's own grader), then
    judged by a benchmark's judge grader (when the suite selects one), then judged (with a
    judge); not yet re-derived. A caller stopped by Ctrl-C keeps the last stage it saw."""
    targets = [p for p in record.probes if is_target(p)]
    batch = Batch(settings.answer, settings.cache)
    try:
        results = batch.run([answer_job(p) for p in targets])
    finally:
        batch.close()
    by_key = {p.key: result for p, result in zip(targets, results)}
    probes = tuple(_answered(p, by_key[p.key]) if p.key in by_key else p for p in record.probes)
    answered = apply_grader(replace(record, probes=probes, answerer=_summary(batch, targets, results)))
    yield answered
    if applies(answered):
        answered = bench_judge_record(answered, settings)
        yield answered
    if settings.judge is not None:
        yield judge_record(answered, settings.judge, settings.cache, settings.judge_repeats)


def answer_job(probe: ProbeResult) -> dict[str, str]:
    """The answer template's variables for ``probe``: its pack and question, and its asking
    time when it has one."""
    job = {"pack": probe.pack or "", "question": probe.question}
    if probe.asked_at:
        job["asked_at"] = spoken_date(probe.asked_at)
    return job


def spoken_date(iso: str) -> str:
    """An ISO 8601 date as a person says it: ``2023-05-30T23:17`` is "Tuesday, 30 May 2023, 23:17"."""
    when = datetime.fromisoformat(iso)
    return f"{when:%A}, {when.day} {when:%B %Y, %H:%M}"


def _answered(probe: ProbeResult, result: Reply | str | None) -> ProbeResult:
    probe = replace(probe, grader_score=None, grader_reason=None, grades=None)  # a new answer is graded anew
    if not isinstance(result, Reply):
        return replace(probe, llm_answer=None, llm_ok=None, llm_tokens=None, llm_cost_usd=None,
                       call=AnswerCall(llm_cached=None, llm_error=result or NOT_ASKED), judge=JudgeMark(None))
    return replace(probe, llm_answer=result.text, llm_ok=grade_answer(probe_from_record(probe), result.text),
                   llm_tokens=result.total_tokens, llm_cost_usd=result.cost_usd,
                   call=AnswerCall(llm_cached=result.cached, llm_error=None), judge=JudgeMark(None))


def _summary(batch: Batch, probes: list[ProbeResult], results: list[Reply | str | None]) -> Answerer:
    replies = [r for r in results if isinstance(r, Reply)]
    failed = sum(1 for r in results if isinstance(r, str))
    not_answered = len(probes) - len(replies)
    stopped = None
    if batch.stopped:
        stopped = (f"answerer stopped: {batch.stopped}; {len(replies)} of {len(probes)} probes answered, "
                   f"{not_answered} left unanswered")
    side = from_json(ModelSide, batch.summary(), "answerer")  # the client's settings and spend: its JSON edge
    totals = spent(replies)
    return Answerer(**vars(side), probes=len(probes), answered=len(replies), failed=failed, not_answered=not_answered,
                    calls=len(replies), prompt_tokens=totals["prompt_tokens"], completion_tokens=totals["completion_tokens"],
                    tokens=totals["tokens"], cost_usd=totals["cost_usd"], stopped=stopped, judge=None)


def summary_lines(answerer: Answerer, bench: BenchmarkJudge | None = None) -> list[str]:
    """The lines the CLI prints after answering: one summary (and one for a benchmark's judge
    grader, ``bench``), then any stop reason."""
    cache = answerer.cache
    cached = f", {cache.hits} from the cache" if cache.enabled else ""
    tokens = "tokens unknown" if answerer.tokens is None else f"{answerer.tokens} tokens"
    cost = "cost unknown" if answerer.cost_usd is None else f"${answerer.cost_usd:.4f}"
    lines = [f"answerer: {answerer.answered} of {answerer.probes} probes answered by {answered_by(answerer)}{cached}; "
             f"{tokens}, {cost}"]
    judge = answerer.judge
    if judge:
        lenient = judge.leniency
        lines.append(f"judge: accepts {judge.accepted.k} of {judge.accepted.n} answers; leniency check: "
                     f"rejected {lenient.rejected} of {lenient.n} planted wrong answers")
    if bench:
        lines.append(f"benchmark judge: {bench.grader.name} judged {bench.judged} of {bench.questions} answers "
                     f"({bench.skipped} skipped by its rule) with {bench.model}; {bench.calls} calls, "
                     f"{bench.cache.hits} from the cache")
    return lines + [line for line in (answerer.stopped, judge and judge.stopped, bench and bench.stopped) if line]
