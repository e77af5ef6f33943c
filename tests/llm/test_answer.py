"""Model answers from real packs, against the mock inference server as a real process."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import pytest

from memeval.llm.answer import NOT_ASKED, answer_record, is_target, summary_lines
from memeval.record import RunRecord
from memeval.record.codec import to_json
from tests.llm.conftest import Mock

pytestmark = pytest.mark.slow  # every test here starts a process or uses one a fixture started

Json = dict[str, Any]


def targets(record: RunRecord | Json) -> list[Json]:
    """The probes a model answers, as run.json holds them."""
    typed = record if isinstance(record, RunRecord) else RunRecord.from_json(record)
    return [to_json(p) for p in typed.probes if is_target(p)]  # type: ignore[misc]


def _by_id(record: Json, phase: str = "synthesis") -> dict[str, Json]:
    return {p["id"]: p for p in record["probes"] if p["phase"] == phase}


def _unique_questions(record: RunRecord) -> int:
    return len({(p["pack"], p["question"]) for p in targets(record)})


def test_answers_are_graded_right_and_wrong(mock: Mock, settings, record: RunRecord) -> None:
    answered = answer_record(record, settings(cache=False)).to_json()
    probes = _by_id(answered)
    assert "40 Canal Road" in probes["where-office"]["llm_answer"] and probes["where-office"]["llm_ok"] is True
    # the mock picks the handbook line, which holds the superseded address
    assert "12 Harbour Street" in probes["continue-move"]["llm_answer"] and probes["continue-move"]["llm_ok"] is False
    assert probes["no-vault"]["llm_answer"] == "unknown" and probes["no-vault"]["llm_ok"] is True
    a = answered["answerer"]
    assert (a["probes"], a["answered"], a["failed"], a["not_answered"], a["stopped"]) == (15, 15, 0, 0, None)
    assert a["endpoint"] == mock.url and a["prompt"]["name"] == "answer-v1" and len(a["prompt"]["sha256"]) == 64
    assert a["sampling"] == {"temperature": 0.0, "max_tokens": 120}
    kpis = {k["name"]: k for k in answered["kpis"]}
    assert kpis["model answer"]["value"] is not None and kpis["model answer"]["n"] == 7
    assert kpis["answerer $"]["value"] == pytest.approx(a["cost_usd"], abs=1e-4)


def test_token_and_cost_totals_are_sums_over_calls(mock: Mock, settings, record: RunRecord) -> None:
    answered = answer_record(record, settings(cache=False))
    a = answered.to_json()["answerer"]
    probes = targets(answered)
    assert a["tokens"] == sum(p["llm_tokens"] for p in probes) == a["prompt_tokens"] + a["completion_tokens"]
    assert a["cost_usd"] == pytest.approx(sum(p["llm_cost_usd"] for p in probes))
    assert a["cost_usd"] == 0.0  # the mock reports a cost of 0: it costs nothing
    spent = a["incurred"]
    assert spent["calls"] == spent["requests"] == mock.chat_calls() == 15
    assert (spent["tokens"], spent["cost_usd"]) == (a["tokens"], pytest.approx(a["cost_usd"]))


def test_concurrency_keeps_results_in_probe_order(mock: Mock, settings, record: RunRecord) -> None:
    one = answer_record(record, settings({"concurrency": 1}, cache=False)).to_json()
    many = answer_record(record, settings({"concurrency": 8}, cache=False)).to_json()
    fields = ("id", "phase", "llm_answer", "llm_ok", "llm_tokens", "llm_cost_usd")
    assert [[p[f] for f in fields] for p in one["probes"]] == [[p[f] for f in fields] for p in many["probes"]]


def test_cache_miss_then_hit_makes_no_second_call(mock: Mock, settings, record: RunRecord) -> None:
    first = answer_record(record, settings()).to_json()
    unique = _unique_questions(record)
    assert mock.chat_calls() == unique == first["answerer"]["cache"]["misses"]
    again = answer_record(record, settings()).to_json()
    assert mock.chat_calls() == unique
    a = again["answerer"]
    # the entries the first run wrote serve the unique prompts; the rest are this run's own reuses
    assert a["cache"] == {"enabled": True, "salt": None, "hits": unique, "misses": 0, "reused": 15 - unique}
    assert all(p["llm_cached"] for p in targets(again))
    assert a["incurred"]["calls"] == 0 and a["incurred"]["cost_usd"] == 0.0
    assert (a["tokens"], a["cost_usd"]) == (first["answerer"]["tokens"], first["answerer"]["cost_usd"])
    assert [p["llm_answer"] for p in again["probes"]] == [p["llm_answer"] for p in first["probes"]]


def test_no_cache_makes_the_calls(mock: Mock, settings, record: RunRecord) -> None:
    answer_record(record, settings()).to_json()
    calls = mock.chat_calls()
    a = answer_record(record, settings(cache=False)).to_json()["answerer"]
    assert mock.chat_calls() == calls + 15
    assert a["cache"]["enabled"] is False and a["incurred"]["calls"] == 15


def test_cache_salt_separates_repeats(mock: Mock, settings, record: RunRecord) -> None:
    unique = _unique_questions(record)
    answer_record(record, settings(salt="r1")).to_json()
    answer_record(record, settings(salt="r2")).to_json()
    assert mock.chat_calls() == 2 * unique
    a = answer_record(record, settings(salt="r1")).to_json()["answerer"]
    assert mock.chat_calls() == 2 * unique
    assert a["cache"]["salt"] == "r1" and a["cache"]["hits"] == unique and a["cache"]["reused"] == 15 - unique


def test_429_is_retried_after_retry_after(mock: Mock, settings, record: RunRecord) -> None:
    mock.fail(429, retry_after=1)
    a = answer_record(record, settings(cache=False)).to_json()["answerer"]
    assert a["answered"] == 15 and a["failed"] == 0
    assert a["incurred"]["retries"] == 1 and a["incurred"]["requests"] == 16 == mock.chat_calls()


def test_5xx_is_retried_then_given_up(mock: Mock, settings, record: RunRecord) -> None:
    mock.fail(500, count=2)
    a = answer_record(record, settings(cache=False)).to_json()["answerer"]
    assert (a["answered"], a["incurred"]["retries"], a["incurred"]["requests"]) == (15, 2, 17)
    mock.fail(503)
    answered = answer_record(record, settings({"retries": 0, "concurrency": 1}, cache=False)).to_json()
    failed = [p for p in targets(answered) if p["llm_error"]]
    assert len(failed) == 1 and answered["answerer"]["failed"] == 1
    assert failed[0]["llm_ok"] is None and failed[0]["llm_answer"] is None
    assert failed[0]["llm_error"].startswith(f"HTTP 503 from {mock.url}")


def test_a_call_past_its_timeout_fails_alone(mock: Mock, settings, record: RunRecord) -> None:
    mock.slow(0.5)
    answered = answer_record(record, settings({"timeout_s": 0.1, "retries": 0, "concurrency": 16}, cache=False)).to_json()
    assert answered["answerer"]["failed"] == 15 and answered["answerer"]["stopped"] is None
    assert all(p["llm_ok"] is None and p["llm_error"] == f"timed out waiting for {mock.url} (after 1 attempts)"
               for p in targets(answered))


def test_calls_left_in_flight_by_a_timeout_do_not_take_the_next_tests_fault(mock: Mock, settings,
                                                                            record: RunRecord) -> None:
    """The sequence that made this module flaky: calls abandoned by their timeout are still
    sleeping on the shared mock when the next test resets it and sets a one-shot 403; that 403
    must reach the next test's call, not an abandoned one."""
    mock.slow(0.5)
    abandoned = answer_record(record, settings({"timeout_s": 0.1, "retries": 0, "concurrency": 16}, cache=False))
    assert abandoned.answerer is not None and abandoned.answerer.failed == 15
    mock.reset()
    mock.fail(403)
    time.sleep(0.6)  # the abandoned calls wake up now, while the fault is set (as when a test primes a cache first)
    answered = answer_record(record, settings({"concurrency": 1}, cache=False))
    assert answered.answerer is not None
    assert answered.answerer.stopped is not None and "HTTP 403" in answered.answerer.stopped
    assert answered.answerer.answered == 0


def test_403_stops_keeping_answers_so_far(mock: Mock, settings, record: RunRecord) -> None:
    primed = replace(record, probes=record.probes[:3])
    answer_record(primed, settings())
    known = {(p.pack, p.question) for p in primed.probes}
    calls = mock.chat_calls()
    mock.fail(403)
    answered = answer_record(record, settings({"concurrency": 1})).to_json()
    assert mock.chat_calls() == calls + 1
    a = answered["answerer"]
    kept = [p for p in targets(answered) if p["llm_answer"] is not None]
    assert {(p["pack"], p["question"]) for p in kept} == known and all(p["llm_cached"] for p in kept)
    rest = [p for p in targets(answered) if p["llm_answer"] is None]
    assert rest and all(p["llm_ok"] is None and p["llm_error"] == NOT_ASKED for p in rest)
    assert a["stopped"] == (f"answerer stopped: HTTP 403 from {mock.url}: This model is not available to this key; "
                            f"{len(kept)} of 15 probes answered, {len(rest)} left unanswered")
    assert (a["answered"], a["not_answered"]) == (len(kept), len(rest))
    assert {k["name"]: k for k in answered["kpis"]}["model answer"]["n"] < 7


def test_nothing_answered_has_unknown_tokens_and_cost_not_zero(mock: Mock, settings, record: RunRecord) -> None:
    mock.fail(401)
    answered = answer_record(record, settings({"concurrency": 1}, cache=False))
    a = answered.to_json()["answerer"]
    assert (a["answered"], a["tokens"], a["cost_usd"]) == (0, None, None)
    assert answered.answerer is not None
    assert summary_lines(answered.answerer)[0].endswith("probes answered by openai/gpt-4.1-mini; tokens unknown, cost unknown")


def test_a_mock_says_it_is_one_and_costs_nothing_even_with_a_price_table(mock: Mock, settings,
                                                                          record: RunRecord) -> None:
    """The mock serves ``mock-chat`` whatever model was asked for; no price is applied to it, so
    a price table for the asked-for model cannot turn a mock run into dollars."""
    prices = {"prices": {"openai/gpt-4.1-mini": {"input_per_mtok": 1000.0, "output_per_mtok": 1000.0}}}
    answered = answer_record(record, settings(prices, cache=False))
    a = answered.to_json()["answerer"]
    assert a["model"] == "openai/gpt-4.1-mini" and a["incurred"]["served"] == ["mock-chat"]
    assert a["cost_usd"] == 0.0 and all(p["llm_cost_usd"] == 0.0 for p in targets(answered))
    assert answered.answerer is not None
    line = summary_lines(answered.answerer)[0]
    assert "answered by the mock model mock-chat (asked for openai/gpt-4.1-mini)" in line and "$0.0000" in line


def test_no_price_is_applied_to_a_mock_model(settings) -> None:
    block = {"model": "mock-chat", "prices": {"mock-chat": {"input_per_mtok": 5.0, "output_per_mtok": 5.0}}}
    answerer = settings(block).answer
    assert answerer.price() is None and answerer.price("mock-chat") is None
    real = settings({"prices": {"openai/gpt-4.1-mini": {"input_per_mtok": 5.0, "output_per_mtok": 5.0}}}).answer
    assert real.price() is not None and real.price("mock-chat") is None
