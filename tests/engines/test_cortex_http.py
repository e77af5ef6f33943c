"""The cortex adapter over real HTTP against the fake CortexDB, started as a real process.

Faults are injected through the fake's control route (``POST v1/_fake/faults``); nothing of the
adapter is patched. The bearer key is a planted, distinctive value so a leak would show.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from types import SimpleNamespace

import httpx
import pytest

from memeval.engines.base import MemoryItem, RecallRequest, ToolCallRef
from memeval.engines.cortex.adapter import CortexEngine, create
from memeval.engines.cortex.layout import ShapeError, records, tenant_root
from memeval.engines.cancel import cancel_requests, reset_cancel
from memeval.engines.server import free_port
from memeval.errors import EngineError, UsageError
from memeval.runner.waits import drain
from memeval.servers.launch import RunningServer
from tests.engines.conftest import CORTEX_KEY, QUICK, connect, fake_cortex, turn, write_all


@pytest.fixture(scope="module")
def bitemporal_off() -> Iterator[RunningServer]:
    yield from fake_cortex([], {"CORTEX_API_KEY": CORTEX_KEY, "CORTEX_BITEMPORAL_MODE": "off",
                                "CORTEX_ENTITY_GRAPH": "0"})


@pytest.fixture
def engine(cortex_engine: CortexEngine) -> CortexEngine:
    return cortex_engine


def listing(engine: CortexEngine, tenant: str, limit: int = 100) -> list[MemoryItem]:
    items: list[MemoryItem] = []
    cursor = None
    while True:
        page = engine.page(tenant, cursor, limit)
        items += page.items
        cursor = page.cursor
        if cursor is None:
            return items


@pytest.mark.slow


def test_write_and_list_round_trip_through_doubled_paged_listings(engine: CortexEngine, tenant: str) -> None:
    calls = (ToolCallRef("billing.lookup", "call-1"),)
    items = [turn(tenant, f"Note number {i} about the move.", index=i, tool_calls=calls if i % 2 else (),
                  tags=("kind:note",)) for i in range(130)]
    doc = MemoryItem(tenant, "source:Google Drive", "document", "The office is at 40 Canal Road.",
                     title="Office handbook", at="2026-08-30T10:00:00Z")
    write_all(engine, items + [doc])
    found = listing(engine, tenant, limit=40)
    assert len(found) == 131 and len({i.id for i in found}) == 131
    assert found == sorted(items, key=lambda i: i.at or "", reverse=True) + [doc]


@pytest.mark.slow


def test_writing_the_same_item_again_is_a_replay(engine: CortexEngine, tenant: str) -> None:
    item = turn(tenant, "Lunch order for Friday is sushi.")
    assert engine.write(item).replayed is False
    receipt = engine.write(item)
    assert receipt.replayed is True and receipt.id == item.id
    write_all(engine, [item])
    assert listing(engine, tenant) == [item]


@pytest.mark.slow


def test_recall_reads_every_scope_a_prefix_node_selects(engine: CortexEngine, tenant: str) -> None:
    write_all(engine, [
        turn(tenant, "The parking permit costs 6500 yen.", agent="support", index=1),
        turn(tenant, "The parking garage opens at seven.", agent="coder", index=2),
        MemoryItem(tenant, "source:notion", "document", "Parking is free on Sundays.", at="2026-09-01T08:00:00Z"),
        MemoryItem(tenant, "learnings", "learning", "Answer parking questions with the price first."),
    ])
    agents = engine.recall(RecallRequest(tenant, ("agent:",), "parking permit", 10))
    assert [(h.item.agent, h.score) for h in agents] == [("coder", 1.0), ("support", 1.0)]  # equal rank: newest first
    docs = engine.recall(RecallRequest(tenant, ("source:", "learnings"), "parking", 10))
    assert {h.item.kind for h in docs} == {"document", "learning"}
    one = engine.recall(RecallRequest(tenant, ("agent:coder",), "parking", 10))
    assert [h.item.agent for h in one] == ["coder"]
    newest = engine.recall(RecallRequest(tenant, ("agent:",), None, 1))
    assert [h.item.agent for h in newest] == ["coder"]


@pytest.mark.slow


def test_answer_rebuilds_a_pack_that_expired(engine: CortexEngine, cortex: RunningServer, tenant: str) -> None:
    write_all(engine, [turn(tenant, "We moved to 40 Canal Road.")])
    cortex.faults(fail=[{"route": "v1/answer", "status": 404, "count": 2, "error_code": "NOT_FOUND"}])
    assert "40 Canal Road" in engine.answer(tenant, "Where did we move?", ("agent:support",), 5)
    assert cortex.faults()["fail"] == []
    cortex.faults(expire_packs=True)
    with pytest.raises(EngineError, match=r"v1/answer: 404 NOT_FOUND .*gone 3 rounds"):
        engine.answer(tenant, "Where did we move?", ("agent:support",), 5)


@pytest.mark.slow


def test_forget_cascades_to_derived_facts_and_works_without_receipts(
        engine: CortexEngine, cortex: RunningServer, monkeypatch: pytest.MonkeyPatch, tenant: str) -> None:
    alice, bob = turn(tenant, "Alice moved to Berlin.", index=1), turn(tenant, "Bob works at Acme.", index=2)
    write_all(engine, [alice, bob])
    assert drain(engine, 5, 0.02)["drained"]
    assert {f.object for f in engine.inspect(tenant).facts} == {"Berlin", "Acme"}
    other = connect(cortex, monkeypatch)  # knows no receipts: finds the event by its tm:i: label
    assert other.forget(tenant, (alice.id,)) == 1
    other.close()
    assert {f.object for f in engine.inspect(tenant).facts} == {"Acme"}
    assert listing(engine, tenant) == [bob]
    assert engine.recall(RecallRequest(tenant, ("agent:",), "Alice Berlin", 5)) == []
    assert engine.forget(tenant, (bob.id,)) == 1 and listing(engine, tenant) == []


@pytest.mark.slow


def test_erase_leaves_the_tenant_empty(engine: CortexEngine, cortex: RunningServer, tenant: str) -> None:
    write_all(engine, [turn(tenant, "One."), turn(tenant, "Two.", agent="coder"),
                       MemoryItem(tenant, "learnings", "learning", "Three.")])
    engine.erase(tenant)
    assert listing(engine, tenant) == []
    reply = httpx.get(f"{cortex.url}/v1/scopes/list", params={"prefix": tenant_root(tenant), "limit": 1000},
                      headers={"Authorization": f"Bearer {CORTEX_KEY}"})
    assert reply.json()["items"] == []


@pytest.mark.slow


def test_429_waits_for_retry_after_then_succeeds(engine: CortexEngine, cortex: RunningServer, tenant: str,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    cortex.faults(fail=[{"route": "v1/scopes/list", "status": 429, "count": 1, "retry_after": 1}])
    start = time.monotonic()
    assert engine.page(tenant).items == ()
    assert time.monotonic() - start >= 0.9
    assert "429 RATE_LIMITED" in caplog.text and "retry 2" in caplog.text


@pytest.mark.slow


def test_a_500_storm_is_one_engine_error_after_bounded_retries(engine: CortexEngine, cortex: RunningServer,
                                                               tenant: str) -> None:
    cortex.faults(fail=[{"route": "v1/recall", "status": 500, "count": 10}])
    with pytest.raises(EngineError) as caught:
        engine.recall(RecallRequest(tenant, ("learnings",), "anything", 5))
    reason = str(caught.value)
    assert reason == "cortex POST v1/recall: 500 INTERNAL (injected fault) after 3 attempts"
    assert "\n" not in reason
    assert cortex.faults()["fail"][0]["count"] == 7


@pytest.mark.slow


def test_writes_retry_state_changes_and_say_why_they_are_refused(engine: CortexEngine, cortex: RunningServer,
                                                                  tenant: str) -> None:
    cortex.faults(fail=[{"route": "v1/experience", "status": 503, "count": 4,
                          "error_code": "AUTHORIZATION_STATE_CHANGED"}])
    assert engine.write(turn(tenant, "Written on the fifth attempt.")).replayed is False
    cortex.faults(fail=[{"route": "v1/experience", "status": 403, "error_code": "POLICY_DENIED"}])
    with pytest.raises(EngineError, match=r"v1/experience: 403 POLICY_DENIED .*unauthorized \(check CORTEX_DB_KEY\)"):
        engine.write(turn(tenant, "Refused."))


@pytest.mark.slow


def test_connection_resets_are_retried_for_reads_and_idempotent_writes(engine: CortexEngine, cortex: RunningServer,
                                                                        tenant: str) -> None:
    cortex.faults(reset=[{"route": "v1/experience", "count": 1}, {"route": "v1/events", "count": 1}])
    item = turn(tenant, "Survives a reset.")
    engine.write(item)
    write_all(engine, [item])
    assert listing(engine, tenant) == [item]
    assert cortex.faults()["reset"] == []


def test_a_refused_connection_is_one_engine_error_after_retries(monkeypatch: pytest.MonkeyPatch, tenant: str) -> None:
    monkeypatch.setenv("CORTEX_DB_KEY", CORTEX_KEY)
    engine = create({"url": f"http://127.0.0.1:{free_port()}", **QUICK})
    with pytest.raises(EngineError, match=r"^cortex GET v1/auth/whoami: ConnectError: .* after 3 attempts$"):
        engine.page(tenant)
    engine.close()


@pytest.mark.slow


def test_usage_grows_and_the_enrichment_backlog_drains(engine: CortexEngine, tenant: str) -> None:
    before = engine.usage()
    write_all(engine, [turn(tenant, f"Carol likes tea number {i}.", index=i) for i in range(5)])
    assert drain(engine, 5, 0.02)["drained"]
    spent = engine.usage().minus(before)
    assert spent.calls >= 5 and spent.tokens > 0 and (spent.cost_usd or 0) > 0
    assert spent.by_role["enrichment"] > 0


@pytest.mark.slow


def test_beliefs_build_and_conflicts_are_none_when_bitemporal_mode_is_off(
        bitemporal_off: RunningServer, monkeypatch: pytest.MonkeyPatch, tenant: str) -> None:
    engine = connect(bitemporal_off, monkeypatch)
    write_all(engine, [turn(tenant, "Alice moved to Berlin.", index=1), turn(tenant, "Alice moved to Paris.", index=2)])
    drain(engine, 5, 0.02)
    assert engine.build_beliefs(tenant).built == 2
    derived = engine.inspect(tenant)
    assert derived.conflicts == ()
    assert sorted(b.line() for b in derived.beliefs) == ["Alice moved to Berlin (contested, 0.90)",
                                                         "Alice moved to Paris (supported, 0.90)"]
    engine.close()


@pytest.mark.slow


def test_info_reports_server_version_capabilities_and_flags(bitemporal_off: RunningServer,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    engine = connect(bitemporal_off, monkeypatch)
    info = engine.info()
    assert info.server_version == "v0.10.5-fake" and "refers_to_v1" in info.server_capabilities
    assert info.flags == {"CORTEX_BITEMPORAL_MODE": "off", "CORTEX_ENTITY_GRAPH": "0"}
    assert info.capabilities == {"forget", "erase", "answer", "beliefs", "inspect", "usage", "backlog", "conflicts"}
    assert info.settings["url"] == bitemporal_off.url
    engine.close()


@pytest.mark.slow


def test_the_key_never_appears_in_errors_logs_or_reprs(cortex: RunningServer, monkeypatch: pytest.MonkeyPatch,
                                                       tenant: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "sk-planted-WRONG-0c4e5d1f"
    texts = []
    for key in (CORTEX_KEY, wrong):
        engine = connect(cortex, monkeypatch, key)
        texts += [repr(engine), repr(engine.http), str(engine.info().to_json() if key == CORTEX_KEY else "")]
        cortex.faults(clear=True, fail=[{"route": "v1/scopes/list", "status": 500, "count": 6}])
        for action in (lambda: engine.recall(RecallRequest(tenant, ("learnings",), "x", 1)),
                       lambda: engine.page(tenant)):
            with pytest.raises(EngineError) as caught:
                action()
            texts.append(str(caught.value))
        engine.close()
    cortex.faults(clear=True)
    assert any("unauthorized (check CORTEX_DB_KEY)" in t for t in texts)
    for text in texts + [caplog.text]:
        assert CORTEX_KEY not in text and wrong not in text


def test_settings_are_checked_at_creation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CORTEX_DB_URL", raising=False)
    with pytest.raises(UsageError, match="set CORTEX_DB_URL"):
        create({})
    with pytest.raises(UsageError, match="only to a loopback host"):
        create({"url": "http://cortex.example.com"})
    with pytest.raises(UsageError, match="unknown setting 'concurency'"):
        create({"url": "http://127.0.0.1:1", "concurency": 2})
    assert create({"url": "http://cortex.example.com", "allow_http": True}).settings.allow_http


@pytest.mark.slow
@pytest.mark.parametrize("mode, says", [("truncated", "200 but the answer is not JSON (cut short or malformed"),
                                        ("html", "200 but the answer is not JSON (text/html"),
                                        ("shape", "the answer is not a JSON object")])
def test_an_unreadable_answer_is_an_engine_error_never_an_empty_result(
        engine: CortexEngine, cortex: RunningServer, tenant: str, mode: str, says: str) -> None:
    write_all(engine, [turn(tenant, "The parking permit costs 6500 yen.")])
    cortex.faults(garble=[{"route": "v1/recall", "mode": mode, "count": 1000}])
    with pytest.raises(EngineError, match=r"^cortex POST v1/recall: ") as caught:
        engine.recall(RecallRequest(tenant, ("agent:",), "parking permit", 3))
    assert says in str(caught.value)


@pytest.mark.slow
def test_a_request_in_flight_is_cancelled_at_once(engine: CortexEngine, cortex: RunningServer, tenant: str) -> None:
    cortex.faults(garble=[{"route": "v1/scopes/list", "mode": "hang", "count": 1}])
    timer = threading.Timer(0.3, cancel_requests, kwargs={"grace_s": 0.5})
    timer.start()
    try:
        # the recall hangs for ever: only the cancel can end it with this error (a timeout reads
        # otherwise), so the message proves it without a wall-clock bound
        with pytest.raises(EngineError, match="cancelled: the run was interrupted"):
            engine.page(tenant)
        with pytest.raises(EngineError, match="the run was interrupted"):  # after the grace, nothing is sent
            time.sleep(0.6)
            engine.page(tenant)
    finally:
        timer.cancel()
        reset_cancel()


def test_a_listing_without_its_records_is_a_shape_error() -> None:
    assert records({"facts": [{"subject": "a"}]}, "facts") == [{"subject": "a"}]
    assert records({"items": []}) == []
    for body in ({}, {"facts": "x"}, {"facts": [1, 2]}, None, []):
        with pytest.raises(ShapeError, match="no list of records under 'facts' or 'items'"):
            records(body, "facts")


def test_a_forget_reply_without_its_deleted_count_is_an_engine_error_not_zero_forgotten() -> None:
    def fake(reply: object) -> SimpleNamespace:
        return SimpleNamespace(name="cortex", routes={"forget": "v1/forget"}, _call=lambda *a, **k: reply)

    assert CortexEngine._forget_chunk(fake({"deleted": {"events": 2}, "requested": 2}), "s", ["a", "b"]) == 2  # type: ignore[arg-type]
    for reply in ({"requested": 1}, {"deleted": {}}, {"deleted": {"events": "1"}}, {"deleted": {"events": True}}):
        with pytest.raises(EngineError, match="no deleted.events count"):
            CortexEngine._forget_chunk(fake(reply), "s", ["a"])  # type: ignore[arg-type]
