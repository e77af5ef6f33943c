"""Engine injected through the fake CortexDB's knobs (a real process on 127.0.0.1), with
``memeval run`` as a real process: each fault has its specified outcome, what was measured
before it stays in run.json, and nothing the run wrote stays in the engine."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from memeval.engines.server import free_port
from memeval.servers.launch import RunningServer, start_server
from tests.reliability.support import (KEY, DroppingProxy, erase_all, finished, item_counts,
                                       memeval_resume, memeval_run, record, run_env, run_id_of, run_scopes, scopes,
                                       start_run, wait_for)

pytestmark = pytest.mark.slow  # every test here starts a process or uses one a fixture started


def statuses(run: dict) -> dict[str, str]:
    return {s["id"]: s["status"] for s in run["scenarios"]}


@pytest.mark.parametrize("route, method, phase", [("v1/recall", "POST", "recall"), ("v1/facts", "GET", "synthesis")])
def test_500s_on_reads_error_the_scenario_after_bounded_retries_and_the_others_run(
        cortex: RunningServer, tmp_path: Path, route: str, method: str, phase: str) -> None:
    # three 500s = every attempt one read gets; the fourth request would succeed
    cortex.faults(fail=[{"route": route, "status": 500, "count": 3}])
    out = tmp_path / "out"
    proc = memeval_run(out, run_env(cortex.url))
    assert proc.returncode == 3, proc.stderr
    run = record(out)
    assert statuses(run) == {"alpha": "errored", "beta": "ok", "gamma": "ok"}
    alpha = run["scenarios"][0]
    assert alpha["error"] == f"cortex {method} {route}: 500 INTERNAL (injected fault) after 3 attempts"
    assert alpha["cleanup"] == {"forgotten": True, "reason": None}
    assert alpha["writes"] == 2 and "settle_ms" in alpha["synthesis"]  # measured before the fault: kept
    probes = [p for p in run["probes"] if p["scenario"] == "alpha"]
    assert len(probes) == 4
    for p in probes:
        if phase == "synthesis" and p["phase"] == "recall":
            assert p["status"] == "scored" and p["hit"] is True  # measured before the fault: kept
        else:
            assert p["status"] == "errored" and p["reason"] == alpha["error"] and p["hit"] is None
    errored = 4 if phase == "recall" else 2
    assert run["totals"]["recall"]["all"]["errored"] + run["totals"]["synthesis"]["all"]["errored"] == errored
    assert run["totals"]["recall"]["all"]["scored"] == (4 if phase == "recall" else 6)  # errored are not misses
    assert cortex.faults()["fail"] == []  # all three 500s were used up: the retries are bounded
    assert scopes(cortex.url) == []  # the fake holds no event at all: every tenant was forgotten


def test_a_429_storm_with_retry_after_is_waited_out_and_the_run_succeeds(cortex: RunningServer, tmp_path: Path) -> None:
    # a burst (the next recall is refused twice in a row, Retry-After: 1) and every 40th request
    cortex.faults(fail=[{"route": "v1/recall", "status": 429, "count": 2, "retry_after": 1}], storm_every=40)
    out = tmp_path / "out"
    started = time.monotonic()
    proc = memeval_run(out, run_env(cortex.url), "--only", "alpha")
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    run = record(out)
    assert statuses(run) == {"alpha": "ok"}
    assert all(p["status"] == "scored" for p in run["probes"])
    assert cortex.faults()["fail"] == []
    # each wait is logged (under --quiet to library.log, not the terminal); the burst's two waits
    # are the server's Retry-After, not the 0.25 s backoff
    log = (out / "library.log").read_text(encoding="utf-8")
    assert "v1/recall: 429 RATE_LIMITED (injected fault); retry 2 in 1.00 s" in log
    assert "v1/recall: 429 RATE_LIMITED (injected fault); retry 3 in 1.00 s" in log
    assert "RATE_LIMITED" not in proc.stderr
    assert took >= 2.0
    assert scopes(cortex.url) == []  # the fake holds no event at all: every tenant was forgotten


def test_writes_that_never_become_visible_time_out_the_scenario_and_later_ones_run(
        cortex: RunningServer, tmp_path: Path) -> None:
    cortex.faults(hide_listings=True)
    out = tmp_path / "out"
    proc = start_run(out, run_env(cortex.url), "--settle-timeout", "1.5")
    try:
        wait_for(lambda: finished(out, "alpha"), "alpha to finish", proc=proc)
    finally:
        cortex.faults(hide_listings=False)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err
    run = record(out)
    assert statuses(run) == {"alpha": "errored", "beta": "ok", "gamma": "ok"}
    alpha = run["scenarios"][0]
    assert alpha["error"] == "only 0 of 2 writes visible after 1.5 s"
    assert alpha["writes"] == 2  # measured before the fault: kept
    assert {p["status"] for p in run["probes"] if p["scenario"] == "alpha"} == {"errored"}
    assert alpha["cleanup"] == {"forgotten": True, "reason": None}
    assert scopes(cortex.url) == []  # the fake holds no event at all: every tenant was forgotten


def test_connection_resets_are_retried_and_replayed_writes_store_nothing_twice(
        cortex: RunningServer, tmp_path: Path) -> None:
    # the fake closes the connection before acting on these reads ...
    cortex.faults(reset=[{"route": "v1/events", "count": 2}, {"route": "v1/recall", "count": 2}])
    # ... and the proxy lets the server store these writes, then drops the answer
    proxy = DroppingProxy(cortex.url, "POST /v1/experience ", drops=3)
    out = tmp_path / "out"
    try:
        proc = memeval_run(out, run_env(proxy.url), "--keep")
        assert proc.returncode == 0, proc.stderr
        run = record(out)
        assert statuses(run) == {"alpha": "ok", "beta": "ok", "gamma": "ok"}
        assert all(p["status"] == "scored" for p in run["probes"])
        assert proxy.dropped == 3 and cortex.faults()["reset"] == []
        counts = item_counts(cortex.url, run_scopes(cortex.url, run["run_id"]))
        assert len(counts) == sum(s["writes"] for s in run["scenarios"]) == 13
        assert [label for label, n in counts.items() if n > 1] == []  # no duplicate event
    finally:
        proxy.close()
        erase_all(cortex.url)


def test_a_server_killed_mid_run_errors_the_scenario_and_resume_completes_the_run(tmp_path: Path) -> None:
    port, data = free_port(), tmp_path / "fake-state.json"
    args = ["--port", str(port), "--data", str(data), "--enrich-delay", "0.005"]
    # writes take 1 s to be listed: the kill lands while beta settles
    server = start_server("fake_cortex", [*args, "--index-delay", "1"], env={"CORTEX_API_KEY": KEY})
    out = tmp_path / "out"
    env = run_env(server.url)
    try:
        proc = start_run(out, env)
        wait_for(lambda: finished(out, "alpha"), "alpha to finish", proc=proc)
        run_id = run_id_of(out)
        wait_for(lambda: any("-beta-" in s for s in run_scopes(server.url, run_id)), "beta's first write", proc=proc)
        server.kill()  # beta is now waiting for its writes to be listed
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 3 and (out / "run.json").exists(), err
        run = record(out)
        assert statuses(run) == {"alpha": "ok", "beta": "errored", "gamma": "errored"}
        beta = run["scenarios"][1]
        # whichever call was in flight, its last attempt found nobody listening
        assert re.fullmatch(r"cortex (GET|POST) v1/\S+: ConnectError: .+ after 3 attempts", beta["error"]), beta
        assert run["scenarios"][2]["error"].endswith("after 3 attempts")
        assert beta["cleanup"]["forgotten"] is False  # the server was gone: resume cleans up
        assert {p["status"] for p in run["probes"] if p["scenario"] != "alpha"} == {"errored"}  # not misses
        assert run["scenarios"][0]["status"] == "ok" and len([p for p in run["probes"] if p["hit"]]) == 4

        server = start_server("fake_cortex", [*args, "--index-delay", "0.05"],  # same port, same state file
                              env={"CORTEX_API_KEY": KEY})
        assert any("-beta-" in s for s in run_scopes(server.url, run_id))  # the killed attempt's writes survived
        resumed = memeval_resume(out, env)
        assert resumed.returncode == 0, resumed.stderr
        final = record(out)
        assert statuses(final) == {"alpha": "ok", "beta": "ok", "gamma": "ok"} and final["run_id"] == run_id
        assert final["scenarios"][0] == run["scenarios"][0]
        assert all(p["status"] == "scored" for p in final["probes"])
        assert scopes(server.url) == []
    finally:
        server.kill()

