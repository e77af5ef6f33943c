"""The fake CortexDB against its wire notes, as a real process on 127.0.0.1."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from procs import CORTEX_KEY, Cortex

from memeval.servers.fake_cortex.enrich import extract_facts
from memeval.servers.fake_cortex.hosted import _Limiter
from memeval.servers.launch import start_server

pytestmark = pytest.mark.slow  # every test here starts a process or uses one a fixture started


@pytest.fixture(autouse=True)
def _no_faults_left(cortex: Cortex) -> Iterator[None]:
    yield
    cortex.faults(clear=True)


def test_auth_is_a_bearer_key_and_whoami_names_the_operator(cortex: Cortex) -> None:
    assert httpx.get(f"{cortex.url}/v1/events?scope=app:x").json() == {
        "error_code": "UNAUTHORIZED",
        "message": "missing or wrong bearer token",
    }
    wrong = httpx.get(f"{cortex.url}/v1/auth/whoami", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    assert cortex.get("/v1/auth/whoami").json() == {"caller": "user:local"}
    assert (
        cortex.http.get("/v1/auth/whoami", headers={"X-Cortex-Actor": "agent:x"}).json()["error_code"]
        == "ACTOR_MISMATCH"
    )
    assert httpx.get(f"{cortex.url}/v1/admin/health").json() == {"status": "healthy"}
    assert httpx.get(f"{cortex.url}/v1/admin/ready").json() == {"ready": True}


def test_a_write_is_accepted_at_once_and_readable_only_after_indexing(cortex: Cortex, scope: str) -> None:
    started = time.monotonic()
    reply = cortex.post("/v1/experience", cortex.body(scope, "The sky is blue."))
    assert reply.status_code == 202
    receipt = reply.json()
    assert receipt["status"] == "captured" and receipt["replayed_from_idempotency"] is False
    assert receipt["event_id"].startswith("evt_")
    assert cortex.listed_ids(scope) == []
    cortex.wait_listed(scope, receipt["event_id"])
    assert time.monotonic() - started >= 0.15
    event = cortex.get("/v1/events", scope=scope).json()["items"][0]
    assert event["content"] == {"kind": "message", "role": "user", "text": "The sky is blue."}
    assert event["context"]["recorded_at"].endswith("Z")


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"extra": 1}, "INVALID_ENVELOPE"),
        ({"content": {"kind": "message", "role": "user", "text": ""}}, "INVALID_ENVELOPE"),
        ({"content": {"kind": "message", "role": "user", "text": "x" * (1024 * 1024 + 1)}}, "INVALID_ENVELOPE"),
        ({"scope": "planet:earth"}, "UNREGISTERED_SCOPE_TYPE"),
    ],
)
def test_the_experience_schema_is_closed(cortex: Cortex, scope: str, change: dict, code: str) -> None:
    reply = cortex.post("/v1/experience", {**cortex.body(scope, "hello"), **change})
    assert (reply.status_code, reply.json()["error_code"]) == (422, code)


def test_listings_are_newest_first_doubled_paged_by_offset_and_filtered_by_labels(cortex: Cortex, scope: str) -> None:
    ids = [cortex.write(scope, f"note {i}", labels=[f"n:{i}"]) for i in range(3)]
    cortex.wait_listed(scope, ids[-1])
    first = cortex.get("/v1/events", scope=scope, limit=4, bogus_param="ignored").json()
    assert [e["id"] for e in first["items"]] == [ids[2], ids[2], ids[1], ids[1]]
    assert first["has_more"] is True and first["next_cursor"] == "4"
    second = cortex.get("/v1/events", scope=scope, limit=4, cursor=first["next_cursor"]).json()
    assert [e["id"] for e in second["items"]] == [ids[0], ids[0]]
    assert second["has_more"] is False
    assert cortex.listed_ids(scope, labels="n:0,n:2") == [ids[2], ids[2], ids[0], ids[0]]
    assert len(cortex.get("/v1/events", scope=scope).json()["items"]) == 6


def test_same_key_and_body_replays_and_another_body_conflicts(cortex: Cortex, scope: str) -> None:
    first = cortex.post("/v1/experience", cortex.body(scope, "Deploys go out on Fridays.", key="k-1")).json()
    again = cortex.post("/v1/experience", cortex.body(scope, "Deploys go out on Fridays.", key="k-1")).json()
    assert again == {**first, "replayed_from_idempotency": True}
    other = cortex.post("/v1/experience", cortex.body(scope, "Deploys go out on Mondays.", key="k-1"))
    assert (other.status_code, other.json()["error_code"]) == (409, "IDEMPOTENCY_CONFLICT")
    cortex.wait_listed(scope, first["event_id"])
    assert cortex.listed_ids(scope) == [first["event_id"]] * 2


def test_bulk_with_wait_indexed_answers_once_readable(cortex: Cortex, scope: str) -> None:
    items = [cortex.body(scope, "turn one"), cortex.body(scope, "turn two")]
    reply = cortex.post("/v1/experience/bulk?wait=indexed", {"items": items, "ordering": "strict_temporal"})
    assert reply.status_code == 200
    results = reply.json()["results"]
    assert reply.json()["accepted"] == 2 and [r["index"] for r in results] == [0, 1]
    assert cortex.listed_ids(scope)[0] == results[-1]["event_id"]


def test_wait_indexed_times_out_with_408_when_indexing_is_slower_than_the_cap(cortex: Cortex, scope: str) -> None:
    cortex.faults(index_delay=2.0)
    reply = cortex.post("/v1/experience?wait=indexed", cortex.body(scope, "slow", key="slow-1"))
    assert (reply.status_code, reply.json()["error_code"]) == (408, "WAIT_TIMEOUT")
    replay = cortex.post("/v1/experience", cortex.body(scope, "slow", key="slow-1")).json()
    assert replay["replayed_from_idempotency"] is True


def _recall(cortex: Cortex, body: dict) -> httpx.Response:
    reply = cortex.post("/v1/recall", body)
    assert reply.status_code == 200, reply.text
    return reply


def test_recall_ranks_by_query_keywords_and_drops_zero_scores(cortex: Cortex, scope: str) -> None:
    none = cortex.write(scope, "Lunch was pasta.")
    one = cortex.write(scope, "The database is Postgres.")
    two = cortex.write(scope, "Our database backups run nightly.")
    cortex.wait_listed(scope, two)
    pack = _recall(cortex, {"scope": scope, "query": "database backups?", "view": "granular"}).json()
    assert [e["id"] for e in pack["layers"]["events"]] == [two, one]
    assert set(pack["layers"]) == {"events", "facts", "beliefs", "episodes", "understanding"}
    assert pack["pack_id"] and pack["warnings"] == [] and pack["provenance"] == {"trail": []}
    newest = _recall(cortex, {"scope": scope, "budgets": {"per_layer_limits": {"events": 2}}}).json()
    assert [e["id"] for e in newest["layers"]["events"]] == [two, one]
    assert none not in [e["id"] for e in newest["layers"]["events"]]


def test_recall_views_and_label_filters(cortex: Cortex, scope: str) -> None:
    parent = scope.rsplit("/", 1)[0]
    up = cortex.write(parent, "parent note about tea", labels=["k:p"])
    down = cortex.write(scope, "child note about tea", labels=["k:c"])
    cortex.wait_listed(scope, down)
    granular = _recall(cortex, {"scope": parent, "query": "tea", "view": "granular"}).json()
    descend = _recall(cortex, {"scope": parent, "query": "tea", "view": "descend"}).json()
    assert [e["id"] for e in granular["layers"]["events"]] == [up]
    assert [e["id"] for e in descend["layers"]["events"]] == [up, down]
    filtered = _recall(cortex, {"scope": parent, "view": "descend", "filters": {"metadata": {"labels": ["k:c"]}}})
    assert [e["id"] for e in filtered.json()["layers"]["events"]] == [down]
    assert cortex.post("/v1/recall", {"scope": parent, "limit": 3}).status_code == 422


def test_temporal_needs_the_refers_to_capability(cortex: Cortex, restricted: Cortex, scope: str) -> None:
    body = {"scope": scope, "query": "x", "temporal": {"refers_during": {"from": "2026-01-01", "to": "2026-02-01"}}}
    assert cortex.post("/v1/recall", body).status_code == 200
    assert restricted.post("/v1/recall", body).status_code == 422


def test_answer_is_extractive_from_a_live_pack_of_the_same_scope(cortex: Cortex, scope: str) -> None:
    event = cortex.write(scope, "The deploy target is staging. It moves to prod on Monday.")
    cortex.wait_listed(scope, event)
    pack_id = _recall(cortex, {"scope": scope, "query": "deploy target"}).json()["pack_id"]
    body = {
        "scope": scope,
        "question": "What is the deploy target?",
        "use_pack_id": pack_id,
        "cite_sources": True,
        "include_context": True,
        "answer_instructions": None,
    }
    reply = cortex.post("/v1/answer", body).json()
    assert reply == {
        "answer": "The deploy target is staging.",
        "citations": [],
        "diagnostics": {"answer_model": "fake-extractive"},
    }
    other = cortex.post("/v1/answer", {**body, "scope": scope + "/agent:b"})
    assert other.status_code == 400
    assert cortex.post("/v1/answer", {**body, "use_pack_id": "pack_nope"}).status_code == 404


def test_packs_expire_after_their_ttl_and_on_any_forget(cortex: Cortex, scope: str) -> None:
    def answer(pack_id: str) -> int:
        return cortex.post("/v1/answer", {"scope": scope, "question": "q?", "use_pack_id": pack_id}).status_code

    old = _recall(cortex, {"scope": scope}).json()["pack_id"]
    time.sleep(0.7)
    assert answer(old) == 404
    fresh = _recall(cortex, {"scope": scope}).json()["pack_id"]
    assert answer(fresh) == 200
    elsewhere = {"scope": "app:other", "selector": {"memory_ids": ["evt_0"]}}
    assert cortex.post("/v1/forget", elsewhere).status_code == 200
    assert answer(fresh) == 404
    cortex.faults(expire_packs=True)
    assert answer(_recall(cortex, {"scope": scope}).json()["pack_id"]) == 404


def _facts(cortex: Cortex, scope: str) -> list[dict]:
    return cortex.get("/v1/facts", scope=scope).json()["items"]


def test_forget_traps_selector_confirm_all_and_cascades(cortex: Cortex, scope: str) -> None:
    event = cortex.write(scope, "Alice moved to Berlin.", key="alice-1")
    cortex.eventually(lambda: _facts(cortex, scope))
    wrong = cortex.post("/v1/forget", {"scope": scope, "selector": {"ids": [event]}})
    assert (wrong.status_code, wrong.json()["error_code"]) == (422, "EMPTY_SELECTOR_WITHOUT_CONFIRMATION")
    both = cortex.post("/v1/forget", {"scope": scope, "selector": {"memory_ids": [event]}, "confirm_all": True})
    assert (both.status_code, both.json()["error_code"]) == (400, "AMBIGUOUS_SELECTOR_CONFIRM_ALL")
    by_id = {"scope": scope, "selector": {"memory_ids": [event]}}
    nothing = cortex.post("/v1/forget", {**by_id, "layers": ["beliefs"], "cascade": "redact_events"}).json()
    assert nothing["deleted"] == {"events": 0, "facts": 0, "beliefs": 0}
    derived = cortex.post("/v1/forget", by_id).json()
    assert derived == {"deleted": {"events": 0, "facts": 1, "beliefs": 0}, "requested": 1, "matched": 1}
    assert cortex.listed_ids(scope) == [event, event] and _facts(cortex, scope) == []
    redacted = cortex.post("/v1/forget", {**by_id, "layers": [], "cascade": "redact_events"}).json()
    assert redacted["deleted"]["events"] == 1
    assert cortex.listed_ids(scope) == []
    rewritten = cortex.post("/v1/experience", cortex.body(scope, "Alice moved to Berlin.", key="alice-1")).json()
    assert rewritten["replayed_from_idempotency"] is False and rewritten["event_id"] != event


def test_a_whole_scope_forget_redacts_but_keeps_keys(cortex: Cortex, scope: str) -> None:
    event = cortex.write(scope, "Bob uses vim.", key="bob-1")
    cortex.wait_listed(scope, event)
    body = {"scope": scope, "selector": {}, "confirm_all": True, "cascade": "redact_events", "audit_note": "test"}
    assert cortex.post("/v1/forget", body).json()["deleted"]["events"] == 1
    again = cortex.post("/v1/experience", cortex.body(scope, "Bob uses vim.", key="bob-1")).json()
    assert again == {"event_id": event, "status": "captured", "replayed_from_idempotency": True}
    time.sleep(0.25)
    assert cortex.listed_ids(scope) == []


def test_erasure_deletes_the_scope_and_redacts_below(cortex: Cortex, scope: str) -> None:
    parent = scope.rsplit("/", 1)[0]
    up = cortex.write(parent, "parent", key="up-1")
    cortex.write(scope, "child", key="down-1")
    assert cortex.post("/v1/erasures", {"scope": parent, "confirm_all": True, "selector": {}}).status_code == 422
    reply = cortex.post("/v1/erasures", {"scope": parent, "confirm_all": True, "audit_note": "gdpr"})
    assert reply.status_code == 202
    receipt = reply.json()
    assert receipt["status"] == "completed" and receipt["verify_url"].endswith(receipt["erasure_id"])
    assert cortex.get(f"/v1/erasures/{receipt['erasure_id']}").json() == {
        "erasure_id": receipt["erasure_id"],
        "status": "completed",
    }
    assert cortex.get("/v1/erasures/era_nope").status_code == 404
    time.sleep(0.25)
    assert cortex.listed_ids(parent) == [] and cortex.listed_ids(scope) == []
    assert cortex.post("/v1/experience", cortex.body(parent, "parent", key="up-1")).json()["event_id"] != up
    assert cortex.post("/v1/experience", cortex.body(scope, "child", key="down-1")).json()["replayed_from_idempotency"]


def test_scopes_list_matches_whole_segments(cortex: Cortex, scope: str) -> None:
    root = scope.split("/")[0]
    cortex.write(scope, "a")
    cortex.write(root + "x/agent:b", "b")
    listed = cortex.get("/v1/scopes/list", prefix=root + "/", limit=1000).json()
    assert listed == {"items": [{"path": scope}]}


def test_scope_registration_is_once_and_writes_register_their_scope(cortex: Cortex, scope: str) -> None:
    root = scope.split("/")[0]
    assert cortex.post("/v1/scopes", {"path": root}).status_code == 201
    assert cortex.post("/v1/scopes", {"path": root}).json()["error_code"] == "SCOPE_REGISTRATION_EXISTS"
    assert cortex.http.get("/v1/scopes", params={"path": scope}).status_code == 404
    cortex.write(scope, "registers")
    assert cortex.http.get("/v1/scopes", params={"path": scope}).json() == {
        "path": scope,
        "owner": "user:local",
        "members": [],
    }


def test_enrichment_derives_facts_and_drains_its_backlog(cortex: Cortex, scope: str) -> None:
    before = cortex.get("/v1/admin/usage").json()
    for text in ["Carol works at Acme.", "Deploy window: Friday 10:00", "nothing to see"]:
        cortex.write(scope, text)
    assert cortex.get("/v1/admin/usage").json()["enrichment_backlog"]["jobs_pending"] >= 3
    drained = cortex.eventually(
        lambda: (u := cortex.get("/v1/admin/usage").json())["enrichment_backlog"]["jobs_pending"] == 0 and u
    )
    facts = [(f["subject"], f["predicate"], f["object"]) for f in _facts(cortex, scope)]
    assert facts == [("Carol", "works at", "Acme"), ("Deploy window", "is", "Friday 10:00")]
    spent = drained["by_role"]["enrichment"]
    assert spent["calls"] >= before["by_role"]["enrichment"]["calls"] + 3
    assert drained["total"]["cost_usd"] > before["total"]["cost_usd"]


def test_enrichment_waits_for_the_quiet_period(restricted: Cortex, scope: str) -> None:
    started = time.monotonic()
    event = restricted.write(scope, "Hank uses Linux.")
    restricted.wait_listed(scope, event)
    assert _facts(restricted, scope) == []
    restricted.eventually(lambda: _facts(restricted, scope))
    assert time.monotonic() - started >= 0.8


def test_extraction_rule() -> None:
    assert extract_facts("Alice moved to Berlin! The team prefers tabs.\nnot a fact") == [
        ("Alice", "moved to", "Berlin"),
        ("The team", "prefers", "tabs"),
    ]


def _build(server: Cortex, scope: str, texts: list[str]) -> dict:
    for text in texts:
        server.write(scope, text)
    server.eventually(lambda: len(_facts(server, scope)) == len(texts))
    built = server.post("/v1/beliefs/build", {"scope": scope})
    assert built.status_code == 200
    return built.json()


def _stances(server: Cortex, scope: str) -> dict[str, str]:
    return {b["claim"]["object"]: b["stance"] for b in server.get("/v1/beliefs", scope=scope).json()["items"]}


def test_beliefs_build_contests_the_older_claim_and_raises_a_conflict(cortex: Cortex, scope: str) -> None:
    built = _build(cortex, scope, ["Alice moved to Berlin.", "Alice moved to Lisbon."])
    assert built == {"built": 2, "items": [], "facts_scanned": 2, "events_scanned": 2, "reasons": {}}
    assert _stances(cortex, scope) == {"Berlin": "contested", "Lisbon": "supported"}
    belief = cortex.get("/v1/beliefs", scope=scope).json()["items"][0]
    assert belief["confidence"] == 0.9 and belief["claim"]["subject"] == "Alice" and belief["valid_from"]
    conflicts = cortex.get("/v1/conflicts", scope=scope).json()["items"]
    assert [(c["kind"], c["status"], c["subject"], c["predicate"]) for c in conflicts] == [
        ("value_conflict", "open", "Alice", "moved to")
    ]
    assert conflicts[0]["records"] == [{"object": "Berlin"}, {"object": "Lisbon"}]
    assert cortex.post("/v1/beliefs/build", {"scope": scope}).json()["built"] == 0


def test_conflicts_answer_503_when_bitemporal_mode_is_off(restricted: Cortex, scope: str) -> None:
    _build(restricted, scope, ["Dan lives in Oslo.", "Dan lives in Rome."])
    assert _stances(restricted, scope) == {"Oslo": "contested", "Rome": "supported"}
    assert restricted.get("/v1/conflicts", scope=scope).status_code == 503


def test_enforce_mode_supersedes_the_older_belief(enforcing: Cortex, scope: str) -> None:
    _build(enforcing, scope, ["Eve uses emacs.", "Eve uses vim."])
    assert _stances(enforcing, scope) == {"emacs": "superseded", "vim": "supported"}
    assert len(enforcing.get("/v1/conflicts", scope=scope).json()["items"]) == 1


def test_flags_are_reported_and_salience_lets_newer_events_win_ties(
    cortex: Cortex, enforcing: Cortex, restricted: Cortex, scope: str
) -> None:
    version = enforcing.get("/v1/admin/version").json()
    assert version["version"] == "v0.10.5-fake" and "refers_to_v1" in version["capabilities"]
    assert version["flags"] == {"CORTEX_BITEMPORAL_MODE": "enforce", "CORTEX_SALIENCE_WEIGHT": "0.3"}
    assert restricted.get("/v1/admin/version").json()["flags"]["CORTEX_ENTITY_GRAPH"] == "0"
    assert "CORTEX_API_KEY" not in cortex.get("/v1/admin/version").json()["flags"]
    for server in (cortex, enforcing):
        older, newer = server.write(scope, "tie about cats"), server.write(scope, "tie about cats too")
        server.wait_listed(scope, newer)
        ranked = [e["id"] for e in _recall(server, {"scope": scope, "query": "cats"}).json()["layers"]["events"]]
        assert ranked == ([older, newer] if server is cortex else [newer, older])


def test_injected_429_carries_retry_after_and_503_its_code(cortex: Cortex, scope: str) -> None:
    cortex.faults(
        fail=[
            {"route": "v1/recall", "status": 429, "count": 1},
            {"route": "v1/experience", "status": 503, "error_code": "AUTHORIZATION_STATE_CHANGED"},
        ]
    )
    limited = cortex.post("/v1/recall", {"scope": scope})
    assert (limited.status_code, limited.headers["retry-after"], limited.json()["error_code"]) == (
        429,
        "1",
        "RATE_LIMITED",
    )
    assert cortex.post("/v1/recall", {"scope": scope}).status_code == 200
    changed = cortex.post("/v1/experience", cortex.body(scope, "x"))
    assert (changed.status_code, changed.json()["error_code"]) == (503, "AUTHORIZATION_STATE_CHANGED")
    assert cortex.faults() == {
        "fail": [],
        "reset": [],
        "garble": [],
        "hide_listings": False,
        "expire_packs": False,
        "storm_every": 0,
        "index_delay": 0.2,
    }


def test_reset_knob_closes_the_connection_without_a_response(cortex: Cortex, scope: str) -> None:
    cortex.faults(reset=[{"route": "v1/events", "count": 1}])
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{cortex.url}/v1/events", params={"scope": scope}, headers={"Authorization": f"Bearer {CORTEX_KEY}"})
    assert cortex.get("/v1/events", scope=scope).status_code == 200


def test_storm_mode_rate_limits_every_kth_request(cortex: Cortex) -> None:
    cortex.faults(storm_every=3)
    statuses = [cortex.get("/v1/admin/health").status_code for _ in range(6)]
    assert statuses.count(429) == 2


def test_hidden_listings_never_become_visible(cortex: Cortex, scope: str) -> None:
    cortex.faults(hide_listings=True)
    event = cortex.write(scope, "invisible")
    time.sleep(0.3)
    assert cortex.listed_ids(scope) == []
    cortex.faults(hide_listings=False)
    assert cortex.listed_ids(scope) == [event, event]


def test_state_survives_a_kill_and_restart_with_a_data_file(tmp_path: Path, scope: str) -> None:
    args = ["--index-delay", "0", "--data", str(tmp_path / "state.json")]
    with start_server("fake_cortex", args) as first:
        client = Cortex(first)
        event = client.write(scope, "Frank prefers tea.", key="frank-1")
        client.wait_listed(scope, event)
        client.close()
        first.kill()
    with start_server("fake_cortex", args) as second:
        again = Cortex(second)
        assert again.listed_ids(scope) == [event, event]
        replay = again.post("/v1/experience", again.body(scope, "Frank prefers tea.", key="frank-1")).json()
        assert replay["event_id"] == event and replay["replayed_from_idempotency"] is True
        assert again.write(scope, "next") == "evt_2"
        again.close()


def test_hosted_mode_wraps_bodies_and_reroots_scopes(hosted: Cortex) -> None:
    reply = hosted.post("/memory/experience", hosted.body("app:h/agent:a", "Gina works at Globex."))
    assert reply.status_code == 202 and reply.json()["success"] is True
    event = reply.json()["data"]["event_id"]
    events = hosted.eventually(lambda: hosted.get("/memory/events", scope="app:h/agent:a").json()["data"]["items"])
    assert events[0]["id"] == event and events[0]["scope"] == "org:local/app:h/agent:a"
    assert hosted.get("/memory/scopes", prefix="app:h").json() == {
        "success": True,
        "data": {"scopes": ["org:local/app:h/agent:a"]},
    }
    pack = hosted.post("/memory/recall", {"scope": "app:h/agent:a", "query": "Globex"}).json()["data"]
    answer = hosted.post(
        "/memory/answer",
        {"scope": "app:h/agent:a", "question": "Where does Gina work?", "use_pack_id": pack["pack_id"]},
    ).json()
    assert answer["data"]["answer"] == "Gina works at Globex."
    forgot = hosted.post(
        "/memory/forget", {"scope": "app:h/agent:a", "selector": {"memory_ids": [event]}, "cascade": "redact_events"}
    )
    assert forgot.json()["data"]["deleted"]["events"] == 1


def test_hosted_mode_differences(hosted: Cortex) -> None:
    def failure(reply: httpx.Response) -> tuple[int, str]:
        assert reply.json()["success"] is False
        return reply.status_code, reply.json()["errorCode"]

    for path in ("/v1/events", "/memory/experience/bulk", "/v1/admin/health", "/v1/auth/whoami"):
        assert hosted.get(path).status_code == 404
    assert failure(httpx.get(f"{hosted.url}/memory/scopes")) == (401, "UNAUTHORIZED")
    repeated = hosted.http.get("/memory/events", params=[("scope", "app:h"), ("labels", "a"), ("labels", "b")])
    assert failure(repeated) == (400, "VALIDATION_ERROR")
    claim = {"Idempotency-Key": "claim-1"}
    assert hosted.post("/memory/experience", hosted.body("app:h", "one"), headers=claim).status_code == 202
    assert failure(hosted.post("/memory/experience", hosted.body("app:h", "one"), headers=claim)) == (409, "CONFLICT")
    question = {"scope": "app:h", "question": "q?"}
    assert failure(hosted.post("/memory/answer", {**question, "answer_instructions": None})) == (400, "BAD_REQUEST")
    assert failure(hosted.post("/memory/answer", {**question, "bogus": 1})) == (400, "BAD_REQUEST")
    assert failure(hosted.post("/memory/recall", {"scope": "app:bad id"})) == (400, "BAD_REQUEST")
    assert failure(hosted.get("/memory/scopes", prefix="tinymemory")) == (400, "BAD_REQUEST")


def test_hosted_erasures_and_rate_limits(hosted: Cortex) -> None:
    hosted.post("/memory/experience", hosted.body("app:e/agent:a", "to erase"))
    erased = hosted.post("/memory/v1/erasures", {"scope": "app:e", "audit_note": "t"}).json()
    assert erased == {
        "erased": True,
        "scope": "org:local/app:e",
        "scopes": 1,
        "erasure_ids": [erased["erasure_ids"][0]],
    }
    assert (
        hosted.post("/memory/v1/erasures", {"scope": "app:e", "confirm_all": True}).json()["errorCode"]
        == "UNKNOWN_FIELD"
    )
    assert hosted.post("/memory/v1/erasures", {"scope": "org:local"}).status_code == 422
    wiped = hosted.http.delete("/memory").json()
    assert wiped["success"] is True and wiped["data"]["erased"] is True
    hosted.faults(fail=[{"route": "memory/", "status": 429}])
    limited = hosted.get("/memory/scopes")
    assert limited.status_code == 429 and limited.headers["retry-after"] == "1"
    assert limited.json() == {"error": {"message": "injected rate limit", "type": "rate_limit_error"}}
    limiter = _Limiter(2)
    assert [limiter.retry_after() is None for _ in range(3)] == [True, True, False]
