"""A benchmark's judge grader (:class:`~memeval.benchmarks.base.JudgeGrader`) run over a
record's model answers, as the suite's ``dataset.grader`` (or an imported suite's ``grader:``)
selects it: LongMemEval's judge (``longmemeval-judge``), mem0's J on LoCoMo (``mem0-j``), or a
plugin benchmark's.

Every answered question (both phases; identical requests are asked once through the cache) gets
one judge call the benchmark builds (for LongMemEval its question type's prompt, the abstention
prompt for any abstention question; the user's templates from ``dataset.prompts``) and sent as
upstream sends it: the prompt alone as the user message, at the grader's sampling (temperature
0; 10 tokens for LongMemEval, no token limit and a JSON object reply for J). The verdict rule is
the grader's: ``grader_score`` 1.0 or 0.0, or null with ``grader_reason`` (a failed call, a
reply it cannot read, a question the grader's rule skips: J never scores category 5, which is
recorded as skipped, not wrong).

**Which model.** ``EVAL_JUDGE_MODEL``, else the suite's ``llm.judge.model``, else the grader's
official judge model (``gpt-4o-2024-08-06``, ``gpt-4o-mini``; written ``openai/…`` on OpenRouter,
the default endpoint). Never the answerer's model by default: a model grading its own answers is
not the benchmark's setup. The endpoint and key are the judge's (``llm.judge.url``) when the run
has a judge, else the answerer's. run.json's ``benchmark.judge`` records the model asked for,
the official one and the names the endpoint served, the sampling, and every template by name,
sha256 and source.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from memeval.benchmarks import find, grader_owner
from memeval.benchmarks.base import JudgeGrader
from memeval.benchmarks.judging import JudgeRequest, PromptTemplate
from memeval.errors import UsageError
from memeval.llm.client import Batch, Reply
from memeval.llm.consistency import judge_rounds, rounds_consistency
from memeval.llm.settings import LlmSettings, ModelSettings, Prompt
from memeval.record import BenchmarkJudge, CacheInfo, Consistency, Incurred, JudgeSampling, ProbeResult, RunRecord, TemplateUsed
from memeval.record.codec import from_json

_VERBATIM_SOURCE = "{% block system %}{% endblock %}{% block user %}{{ prompt }}{% endblock %}"
VERBATIM = Prompt("verbatim", hashlib.sha256(_VERBATIM_SOURCE.encode()).hexdigest(), _VERBATIM_SOURCE)
"""The client prompt a judge request goes through: its text as the user message, no system message."""
Plan = JudgeRequest | str  # a request, or why the question is not judged


def judge_of(record: RunRecord) -> JudgeGrader | None:
    """The judge grader ``record``'s suite selects, or None (no benchmark, a grader that is no
    judge, or a benchmark not installed here)."""
    info = record.benchmark
    bench = find(info.format) if info is not None else None
    return bench.judges.get(info.grader) if info is not None and bench is not None else None


def judge_named(grader: str) -> JudgeGrader:
    """The installed judge grader called ``grader``.

    Raises:
        UsageError: no installed benchmark has a judge grader of that name.
    """
    bench = grader_owner(grader)
    if bench is None or grader not in bench.judges:
        raise UsageError(f"no installed benchmark has a judge grader named {grader!r}")
    return bench.judges[grader]


def applies(record: RunRecord) -> bool:
    """Whether ``record`` is a benchmark run whose grader is a judge and which has model answers."""
    return judge_of(record) is not None and record.answerer is not None


def bench_judge_record(record: RunRecord, settings: LlmSettings) -> RunRecord:
    """``record`` with the judge grader's ``grader_score`` (and ``grader_reason``, ``grades``) on
    every answered question and its run in ``benchmark.judge``; unchanged when it does not
    :func:`apply <applies>`. Never raises for a failing or refusing endpoint (see ``stopped``).

    Raises:
        UsageError: a template file named in the suite cannot be read or filled.
    """
    if not applies(record):
        return record
    info, judge = record.benchmark, judge_of(record)
    assert info is not None and judge is not None
    templates = templates_of(record)
    model_settings = judge_settings(settings, info.grader)
    answered = [p for p in record.probes if p.scored and p.llm_answer is not None]
    plans = {p.key: judge.plan(p, templates, model_settings.model) for p in answered}
    asked = [p for p in answered if isinstance(plans[p.key], JudgeRequest)]
    jobs = [{"prompt": plan.prompt} for p in asked if isinstance(plan := plans[p.key], JudgeRequest)]
    batch = Batch(model_settings, settings.cache)
    try:
        rounds = judge_rounds(batch, jobs, settings.cache.salt, settings.judge_repeats)
    finally:
        batch.close()
    first = {p.key: rounds[0][i] for i, p in enumerate(asked)}  # the verdict recorded: the first repeat's
    probes = tuple(_graded(p, judge, plans[p.key], first.get(p.key)) if p.key in plans else p for p in record.probes)
    summary = _summary(record, judge, batch, model_settings, templates, probes, rounds,
                       rounds_consistency(rounds, lambda r: _verdict(judge, r)))
    return replace(record, probes=probes, benchmark=replace(info, judge=summary))


def judge_settings(settings: LlmSettings, grader: str) -> ModelSettings:
    """The judge grader's model settings: the judge's endpoint (else the answerer's), the model
    named for it (else the official one) and upstream's sampling.

    Raises:
        UsageError: ``grader`` is no installed judge grader.
    """
    judge = judge_named(grader)
    base = settings.judge or settings.answer
    model = settings.judge_model or official_name(judge.official_model, base.url)
    return replace(base, model=model, prompt=VERBATIM, temperature=0.0, max_tokens=judge.max_tokens,
                   json_reply=judge.json_reply)


def official_name(model: str, url: str) -> str:
    """The official judge model as the endpoint names it: ``openai/<model>`` on OpenRouter."""
    return f"openai/{model}" if (urlsplit(url).hostname or "").endswith("openrouter.ai") else model


def templates_of(record: RunRecord) -> dict[str, PromptTemplate]:
    """The grader's templates by key: the suite's ``dataset.prompts`` (or, in an imported suite,
    suite-level ``prompts:``) files, relative to the suite file, over the shipped ones."""
    dataset: Any = record.suite.resolved.get("dataset")
    declared: Any = dataset if isinstance(dataset, Mapping) else record.suite.resolved
    given: Mapping[str, str] = declared.get("prompts") or {}
    folder = os.path.dirname(record.suite.source)
    files = {key: os.path.normpath(os.path.join(folder, str(path))) for key, path in given.items()}
    judge = judge_of(record)
    return judge.templates(files) if judge is not None else {}


def _verdict(judge: JudgeGrader, result: Reply | str | None) -> bool | None:
    return judge.verdict(result.text) if isinstance(result, Reply) else None


def _graded(p: ProbeResult, judge: JudgeGrader, plan: Plan, result: Reply | str | None) -> ProbeResult:
    """``p`` with the first repeat's verdict as its score, or null and the reason."""
    verdict = _verdict(judge, result) if isinstance(plan, JudgeRequest) else None
    if isinstance(plan, str):
        reason: str | None = plan
    elif verdict is not None:
        reason = None
    elif isinstance(result, Reply):
        reason = judge.no_verdict
    else:
        reason = f"no verdict: {result}" if result else "no verdict: the judge stopped before asking"
    score = None if verdict is None else float(verdict)
    return replace(p, grader_score=score, grader_reason=reason, grades={**(p.grades or {}), judge.info.name: score})


def _summary(record: RunRecord, judge: JudgeGrader, batch: Batch, settings: ModelSettings,
             templates: Mapping[str, PromptTemplate],
             probes: tuple[ProbeResult, ...], rounds: list[list[Reply | str | None]],
             agreement: Consistency | None) -> BenchmarkJudge:
    info = record.benchmark
    assert info is not None
    grader = next(g for g in info.graders if g.name == info.grader)
    answered = [p for p in probes if p.scored and p.llm_answer is not None]
    side = batch.summary()  # the client's spend and cache: its JSON edge
    return BenchmarkJudge(
        grader=grader, endpoint=settings.endpoint, model=settings.model, official_model=judge.official_model,
        served=tuple(side["incurred"].get("served") or ()) or None,
        sampling=JudgeSampling(settings.temperature, settings.max_tokens, settings.json_reply),
        templates=tuple(TemplateUsed(key, t.name, t.sha256, t.source) for key, t in templates.items()),
        questions=len(answered), judged=sum(1 for p in answered if p.grader_score is not None),
        skipped=sum(1 for p in answered if judge.skipped is not None and p.grader_reason == judge.skipped),
        no_verdict=sum(1 for p in answered if p.grader_score is None
                       and (judge.skipped is None or p.grader_reason != judge.skipped)),
        calls=sum(1 for r in rounds for x in r if isinstance(x, Reply)),
        cache=from_json(CacheInfo, side["cache"], "judge.cache"), incurred=from_json(Incurred, side["incurred"], "judge.incurred"),
        stopped=f"benchmark judge stopped: {batch.stopped}" if batch.stopped else None,
        consistency=agreement)
