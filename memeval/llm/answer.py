"""Model answers for a run record: every scored probe is answered from its stored pack.

:func:`answer_record` fills, per scored probe (both phases): ``llm_answer``, ``llm_ok`` (the
grader of :mod:`memeval.score.probe`), ``llm_tokens`` (prompt + completion), ``llm_cost_usd``,
``llm_cached`` and ``llm_error``. A probe the model did not answer keeps ``llm_ok`` null, never
false: its call failed (``llm_error`` says why) or the endpoint refused earlier and the run
stopped asking. It then sets ``record["answerer"]`` (below), judges when asked
(:mod:`memeval.llm.judge`) and re-derives totals and KPIs.

``record["answerer"]``: the endpoint (no credentials), model, prompt name and sha256, sampling,
concurrency, timeout and retries; ``cache`` (enabled, salt, hits, misses); ``incurred`` (what this
run's HTTP calls cost: calls, requests, retries, tokens, USD); and, over the answers themselves
whether fresh or cached: ``calls`` (answers), ``prompt_tokens``, ``completion_tokens``,
``tokens``, ``cost_usd`` (null when any answer's cost is unknown or nothing was answered);
``probes``, ``answered``, ``failed``, ``not_answered``, ``stopped`` (one line, or null) and
``judge`` (null unless judged).
"""

from __future__ import annotations

from typing import Any

from memeval.llm.client import Batch, Reply, spent
from memeval.llm.judge import judge_record
from memeval.llm.settings import LlmSettings
from memeval.run.suite import derive
from memeval.score.probe import grade_answer, probe_from_record

NOT_ASKED = "not answered: the answerer stopped"


def targets(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The probe records a model answers: scored, with a pack."""
    return [p for p in record["probes"] if p["status"] == "scored" and p["pack"] is not None]


def answer_record(record: dict[str, Any], settings: LlmSettings) -> dict[str, Any]:
    """Answer, grade (and judge, when ``settings.judge`` is set) every target probe of
    ``record`` in place; returns the re-derived record. Never raises for a refusing or failing
    endpoint: see ``answerer.stopped`` and ``llm_error``."""
    probes = targets(record)
    batch = Batch(settings.answer, settings.cache)
    try:
        results = batch.run([{"pack": p["pack"], "question": p["question"]} for p in probes])
    finally:
        batch.close()
    for probe, result in zip(probes, results):
        _fill(probe, result)
    record["answerer"] = _summary(batch, probes, results)
    if settings.judge is not None:
        record["answerer"]["judge"] = judge_record(record, settings.judge, settings.cache)
    return derive(record)


def _fill(probe: dict[str, Any], result: Reply | str | None) -> None:
    reply = result if isinstance(result, Reply) else None
    probe.update(llm_answer=None, llm_ok=None, llm_tokens=None, llm_cost_usd=None, llm_cached=None,
                 llm_error=None if reply else (result or NOT_ASKED), llm_judge_ok=None)
    if reply is not None:
        probe.update(llm_answer=reply.text, llm_ok=grade_answer(probe_from_record(probe), reply.text),
                     llm_tokens=reply.total_tokens, llm_cost_usd=reply.cost_usd, llm_cached=reply.cached)


def _summary(batch: Batch, probes: list[dict[str, Any]], results: list[Reply | str | None]) -> dict[str, Any]:
    replies = [r for r in results if isinstance(r, Reply)]
    failed = sum(1 for r in results if isinstance(r, str))
    not_answered = len(probes) - len(replies)
    stopped = None
    if batch.stopped:
        stopped = (f"answerer stopped: {batch.stopped}; {len(replies)} of {len(probes)} probes answered, "
                   f"{not_answered} left unanswered")
    return {
        **batch.summary(),
        "probes": len(probes), "answered": len(replies), "failed": failed, "not_answered": not_answered,
        "calls": len(replies), **spent(replies),
        "stopped": stopped,
        "judge": None,
    }


def summary_lines(answerer: dict[str, Any]) -> list[str]:
    """The lines the CLI prints after answering: one summary, then any stop reason."""
    cache = answerer["cache"]
    cached = f", {cache['hits']} from the cache" if cache["enabled"] else ""
    tokens = "tokens unknown" if answerer["tokens"] is None else f"{answerer['tokens']} tokens"
    cost = "cost unknown" if answerer["cost_usd"] is None else f"${answerer['cost_usd']:.4f}"
    lines = [f"answerer: {answerer['answered']} of {answerer['probes']} probes answered by {answerer['model']}{cached}; "
             f"{tokens}, {cost}"]
    judge = answerer.get("judge")
    if judge:
        lenient = judge["leniency"]
        lines.append(f"judge: accepts {judge['accepted']['k']} of {judge['accepted']['n']} answers; leniency check: "
                     f"rejected {lenient['rejected']} of {lenient['n']} planted wrong answers")
    return lines + [line for line in (answerer["stopped"], judge and judge["stopped"]) if line]
