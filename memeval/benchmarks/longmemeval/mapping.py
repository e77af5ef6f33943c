"""LongMemEval questions as memeval scenarios: one per question, in a tenant of its own, its
haystack sessions as dated threads in ``haystack_dates`` order, the question as one probe."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memeval.benchmarks.longmemeval.model import LmeInstance, Turn
from memeval.datasets.yamlout import STYLE, ImportResult, clock, day_of, iso, safe_id, unique_ids

AGENT = "assistant"
PREFERENCE = "single-session-preference"


def scenario_id(question_id: str) -> str:
    """The scenario id a question (with its own haystack) runs as."""
    return safe_id(question_id, "lme-")


def probe_id(question_id: str) -> str:
    """The probe id a question runs as."""
    return safe_id(question_id, "q-")


def unmapped_reason(instance: LmeInstance) -> str | None:
    """Why a question cannot be a probe, or None when it can."""
    if not instance.answer.strip():
        return "the answer is empty"
    return None


def scenario(instance: LmeInstance, epoch: datetime, result: ImportResult) -> dict[str, Any]:
    """The scenario document for one mappable question (see :func:`unmapped_reason`)."""
    sid = scenario_id(instance.question_id)
    threads, evidence = [], []
    for session, tid in zip(instance.sessions, unique_ids([s.id for s in instance.sessions])):
        exchanges, dropped = exchanges_of(tid, session.turns)
        result.dropped_turns += dropped
        evidence += [i for e in exchanges for i in e.pop("has_answer", [])]
        if exchanges:
            threads.append({"id": tid, "agent": AGENT, "day": day_of(epoch, session.date), "time": clock(session.date),
                            "replay": True, "exchanges": exchanges, "x-session_id": session.id,
                            "x-date": session.date_text})
    probe: dict[str, Any] = {
        "id": probe_id(instance.question_id), "route": "ask", "agent": AGENT, "question": instance.question, "style": STYLE,
        **_graded_by(instance),
        "category": instance.question_type, **({"evidence": evidence} if evidence else {}),
        "x-question_id": instance.question_id,
        "x-question_date": instance.asked_text, "asked_at": iso(instance.asked_at),
        "x-asked_day": day_of(epoch, instance.asked_at),
        "x-answer_session_ids": list(instance.answer_session_ids)}
    return {"scenario": sid,
            "about": f"LongMemEval question {instance.question_id} ({instance.question_type}) over its own haystack "
                     f"of {len(instance.sessions)} sessions.",
            "tenants": [safe_id(instance.question_id, "q-")],
            "agents": [{"id": AGENT, "role": "chat assistant remembering one user's past sessions"}],
            "threads": threads, "probes": [probe]}


def _graded_by(instance: LmeInstance) -> dict[str, Any]:
    """How the probe is graded: abstention (an ``_abs`` explanation as gold), judged (a
    preference rubric as gold: no value a pack can hold, so only the judge grader scores it), or
    the answer as ``expect``."""
    if instance.abstention:
        return {"abstain": True, "answer_only": True, "groups": ["abstention"], "gold": instance.answer}
    if instance.question_type == PREFERENCE:
        return {"gold": instance.answer}
    return {"expect": [instance.answer]}


def exchanges_of(thread_id: str, turns: tuple[Turn, ...]) -> tuple[list[dict[str, Any]], int]:
    """User turns open exchanges; the assistant turn after a user turn is its reply. Each turn
    kept is named ``<thread id>:<index in the session>`` (its ``ids``); an exchange holding an
    evidence turn (``has_answer``) lists those ids under the transient key ``has_answer``, which
    the caller pops. Returns the exchanges and how many turns were dropped: empty turns, and an
    assistant turn with no user turn before it (the language has no exchange without a user turn)."""
    out: list[dict[str, Any]] = []
    dropped = 0
    for index, turn in enumerate(turns):
        tid = f"{thread_id}:{index}"
        if not turn.content.strip():
            dropped += 1
            continue
        if turn.role == "user":
            out.append({"user": turn.content, "ids": [tid]})
        elif out and "reply" not in out[-1]:
            out[-1]["reply"] = turn.content
            out[-1]["ids"].append(tid)
        else:
            dropped += 1
            continue
        if turn.has_answer:
            out[-1].setdefault("has_answer", []).append(tid)
    return out, dropped
