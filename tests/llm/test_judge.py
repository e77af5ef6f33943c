"""The LLM judge and its leniency check, against the mock inference server's word-set judge."""

from __future__ import annotations

import pytest

from memeval.llm.answer import answer_record
from memeval.llm.client import Reply
from memeval.llm.judge import planted_answers, verdict
from memeval.record import RunRecord
from memeval.score.probe import grade_answer, probe_from_record
from memeval.servers.mock_inference.models import judge_reply
from tests.llm.conftest import Mock


def _user(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "Reply yes or no."}, {"role": "user", "content": text}]


def test_mock_judges_by_reference_words() -> None:
    shape = "Question: q\nReference answer: 40 Canal Road\nAlso acceptable: Canal Street\nCandidate answer: {}\n"
    assert judge_reply(_user(shape.format("We are at 40 Canal Road now."))) == "yes"
    assert judge_reply(_user(shape.format("On Canal Street."))) == "yes"
    assert judge_reply(_user(shape.format("12 Harbour Street"))) == "no"
    assert judge_reply(_user("- a pack line\n\nQuestion: where?")) is None


def test_verdict_reads_the_first_word() -> None:
    assert [verdict(Reply(t, 1, 1, None)) for t in ("Yes.", "no", "NO, because", "maybe", "")] == [
        True, False, False, None, None]
    assert verdict("HTTP 500") is None and verdict(None) is None


@pytest.mark.slow
def test_planted_answers_are_wrong_and_on_topic(record: RunRecord) -> None:
    planted = planted_answers(record.probes)
    assert all(not grade_answer(probe_from_record(p), answer) for p, _, answer in planted)
    by_probe = {(p.id, kind): answer for p, kind, answer in planted}
    assert by_probe[("where-office", "stale")] == "12 Harbour Street"
    assert by_probe[("where-office", "other probe's answer")] == "Canal Road"
    assert by_probe[("permit-cost", "unknown")] == "unknown"
    assert by_probe[("no-vault", "invented")] == "7741"
    assert len({p.id for p, _, _ in planted}) == 8 and len(planted) == 17


@pytest.mark.slow
def test_judge_and_its_leniency_check(mock: Mock, settings, record: RunRecord) -> None:
    judged = answer_record(record, settings(judge=True, cache=False)).to_json()
    judge = judged["answerer"]["judge"]
    assert judge["prompt"]["name"] == "judge-v1" and judge["sampling"] == {"temperature": 0.0, "max_tokens": 10}
    # the mock's word-set judge ignores two-character tokens, so it takes "Canal Road" for "40 Canal Road"
    assert judge["leniency"] == {"rejected": 15, "n": 17, "planted": 17, "accepted": [
        {"scenario": "office", "id": "where-office", "kind": "other probe's answer", "answer": "Canal Road"},
        {"scenario": "office", "id": "compact-move", "kind": "other probe's answer", "answer": "Canal Road"}]}
    probes = {p["id"]: p for p in judged["probes"] if p["phase"] == "synthesis"}
    assert probes["where-office"]["llm_judge_ok"] is True and probes["continue-move"]["llm_judge_ok"] is False
    # "6,500 yen" holds "6500 yen" for the number-aware grader, not for the mock's word set
    assert probes["permit-cost"]["llm_ok"] is True and probes["permit-cost"]["llm_judge_ok"] is False
    assert judge["agreement"] == {"agree": 13, "n": 15, "kappa": 0.705882} and judge["accepted"] == {"k": 9, "n": 15}
    assert judge["calls"] == 32 and mock.chat_calls() == 15 + 32
    assert judge["cost_usd"] == judge["incurred"]["cost_usd"] and judge["stopped"] is None


@pytest.mark.slow
def test_yaml_judge_block_turns_judging_on(mock: Mock, settings, record: RunRecord) -> None:
    judged = answer_record(record, settings({"judge": {"max_tokens": 3, "temperature": 0.5}})).to_json()
    judge = judged["answerer"]["judge"]
    assert judge["sampling"] == {"temperature": 0.5, "max_tokens": 3} and judge["accepted"]["n"] == 15
