"""LoCoMo conversations as memeval scenarios: one per conversation, in one tenant, its sessions
as dated threads, its questions as probes (category 5 as abstention probes)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memeval.benchmarks.locomo.model import LocomoQuestion, LocomoSample, LocomoTurn
from memeval.datasets.yamlout import STYLE, ImportResult, clock, day_of, iso, safe_id

AGENT = "reader"


def scenario_id(sample_id: str) -> str:
    """The scenario id a conversation runs as."""
    return safe_id(sample_id, "locomo-")


def probe_id(question_id: str) -> str:
    """The probe id a question runs as."""
    return safe_id(question_id)


def gold(question: LocomoQuestion) -> str | None:
    """The gold answer official scoring compares with: category 3's is cut at the first ``;``."""
    if question.answer is None:
        return None
    return question.answer.split(";")[0].strip() if question.category == 3 else question.answer


def unmapped_reason(question: LocomoQuestion) -> str | None:
    """Why a question cannot be an ordinary probe today, or None when it can."""
    if question.category == 5:
        return None
    if not (gold(question) or "").strip():
        return f"category {question.category} with no answer in the file"
    return None


def scenario(sample: LocomoSample, wanted: set[str], epoch: datetime, result: ImportResult) -> dict[str, Any] | None:
    """The scenario document for one conversation and its ``wanted`` questions, or None when
    none of them can be mapped (each unmapped one is added to ``result.unmapped``)."""
    probes = []
    for question in sample.questions:
        if question.id not in wanted:
            continue
        reason = unmapped_reason(question)
        if reason:
            result.unmapped.append({"question_id": question.id, "category": question.category_name,
                                    "question": question.question, "reason": reason})
        else:
            probes.append(probe(question, asked_at(sample)))
    if not probes:
        return None
    threads = []
    for session in sample.sessions:
        exchanges = exchanges_of(session.turns)
        if exchanges:
            threads.append({"id": f"session-{session.number}", "agent": AGENT, "day": day_of(epoch, session.date),
                            "time": clock(session.date), "replay": True, "exchanges": exchanges,
                            "x-date": session.date_text})
    return {"scenario": scenario_id(sample.sample_id),
            "about": f"LoCoMo conversation {sample.sample_id} between {sample.speaker_a} and {sample.speaker_b}, "
                     f"{len(sample.sessions)} dated sessions.",
            "tenants": [safe_id(sample.sample_id)],
            "agents": [{"id": AGENT, "role": f"remembers the conversations of {sample.speaker_a} and {sample.speaker_b}"}],
            "threads": threads, "probes": probes}


def asked_at(sample: LocomoSample) -> str:
    """When a conversation's questions are asked: the date of its last session (LoCoMo dates
    no question; every question is about what came before)."""
    return iso(max(s.date for s in sample.sessions))


def probe(question: LocomoQuestion, asked: str) -> dict[str, Any]:
    """One question as a probe: its category by real name, its evidence dia ids and its asking time."""
    out: dict[str, Any] = {"id": probe_id(question.id), "route": "ask", "agent": AGENT,
                           "question": question.question, "style": STYLE, "asked_at": asked}
    if question.category == 5:  # the trap is often truly in the conversation: graded on the answer alone
        out.update(abstain=True, answer_only=True, groups=["abstention"])
        if question.adversarial_answer:
            out["x-adversarial_answer"] = question.adversarial_answer
    else:
        out["expect"] = [gold(question)]
    out.update({"category": question.category_name, "x-question_id": question.id, "x-category": question.category})
    if question.evidence:
        out["evidence"] = list(question.evidence)
    if question.answer is not None and question.answer != gold(question):
        out["gold"] = question.answer  # mem0's J reads the whole answer; the F1 the cut one
    return out


def turn_text(turn: LocomoTurn) -> str:
    """What a turn puts in memory: the speaker's name, the text, and a shared photo's caption
    (the caption the conversation's own evaluation shows; ``query`` was never seen by anyone)."""
    text = f"{turn.speaker}: {turn.text.strip()}"
    return f"{text} [shares a photo: {turn.blip_caption}]" if turn.blip_caption else text


def exchanges_of(turns: tuple[LocomoTurn, ...]) -> list[dict[str, Any]]:
    """Consecutive turns paired into exchanges (the first as ``user``, the next as ``reply``),
    each with its dia ids and any photo's url and search query (in ``x-photos``)."""
    kept = [t for t in turns if t.text.strip() or t.blip_caption]
    out = []
    for start in range(0, len(kept), 2):
        pair = kept[start:start + 2]
        exchange: dict[str, Any] = {"user": turn_text(pair[0])}
        if len(pair) == 2:
            exchange["reply"] = turn_text(pair[1])
        exchange["ids"] = [t.dia_id for t in pair]
        photos = [{"dia_id": t.dia_id, "img_url": t.img_url, "query": t.query} for t in pair if t.img_url or t.query]
        if photos:
            exchange["x-photos"] = photos
        out.append(exchange)
    return out


def turn_texts(sample: LocomoSample) -> dict[str, str]:
    """Each dia id's text as the import writes it to memory, for reading evidence ids off a
    pack (:func:`memeval.runner.evidence.retrieved_ids`)."""
    return {t.dia_id: turn_text(t) for s in sample.sessions for t in s.turns if t.text.strip() or t.blip_caption}
