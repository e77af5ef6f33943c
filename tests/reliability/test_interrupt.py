"""Ctrl-C: SIGINT to a ``memeval run`` process in the middle of its second scenario stops it within
seconds, forgets what it wrote (unless ``--keep``), writes run.json with what finished and
``interrupted: true``, and exits 130; a second SIGINT during the cleanup still exits 130 (and a
resume removes what that cleanup left). Ctrl-C while the model answers keeps the engine's
results, and an engine server the run started is stopped."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from memeval.servers.launch import RunningServer, start_server
from tests.reliability.support import (FAKE_DEF, MEMEVAL, THREE, erase_all, finished,
                                       memeval_resume, record, run_env, run_id_of, run_scopes, start_run,
                                       started_tenants, wait_for)

pytestmark = pytest.mark.slow  # every test here starts a process or uses one a fixture started


def _mid_beta(cortex: RunningServer, out: Path, *extra: str):
    """A run that has finished alpha and is settling beta's writes: from alpha's start on,
    writes take 3 s to be listed, so the run is reliably mid-scenario when the signal comes."""
    proc = start_run(out, run_env(cortex.url), *extra)
    wait_for(lambda: started_tenants(out, "alpha"), "alpha to start", proc=proc)
    cortex.faults(index_delay=3)  # alpha settles on what it wrote before; beta will wait
    wait_for(lambda: started_tenants(out, "beta"), "beta to start", proc=proc)
    run_id = run_id_of(out)
    wait_for(lambda: sum("-beta-" in s for s in run_scopes(cortex.url, run_id)) >= 2, "beta's writes", proc=proc)
    return proc, run_id


def _ctrl_c(proc: subprocess.Popen[str], within: float) -> str:
    """Send Ctrl-C; check the run exits 130 within ``within`` seconds; its stderr."""
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    took = time.monotonic() - sent
    assert proc.returncode == 130, err
    assert took < within, f"stopped {took:.2f} s after Ctrl-C"
    print(f"stopped {took:.2f} s after Ctrl-C")
    return err


@pytest.mark.parametrize("keep", [False, True])
def test_ctrl_c_stops_within_seconds_forgets_writes_and_keeps_what_finished(
        cortex: RunningServer, tmp_path: Path, keep: bool) -> None:
    out = tmp_path / "out"
    proc, run_id = _mid_beta(cortex, out, *(["--keep"] if keep else []))
    try:
        err = _ctrl_c(proc, within=5)
        run = record(out)
        assert run["interrupted"] is True
        assert [s["id"] for s in run["scenarios"]] == ["alpha"]
        assert run["scenarios"][0]["status"] == "ok" and {p["scenario"] for p in run["probes"]} == {"alpha"}
        assert f"--resume {out}" in err
        left = run_scopes(cortex.url, run_id)
        if keep:
            assert any("-beta-" in s for s in left)  # --keep: what was written stays
        else:
            assert left == []  # every tenant of the run was forgotten, the interrupted one too
    finally:
        erase_all(cortex.url)


def test_a_second_ctrl_c_during_cleanup_still_exits_and_resume_cleans_up(cortex: RunningServer, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc, run_id = _mid_beta(cortex, out)
    # make the cleanup slow: every erasure is refused with Retry-After: 1 (after a Ctrl-C the
    # cleanup has 2 s in all, so the second Ctrl-C must come within the first wait)
    cortex.faults(fail=[{"route": "v1/erasures", "status": 503, "count": 1000, "retry_after": 1}])
    proc.send_signal(signal.SIGINT)
    wait_for(lambda: cortex.faults()["fail"][0]["count"] < 1000, "the cleanup's first erasure", proc=proc)
    assert proc.poll() is None  # now in the cleanup, waiting out a Retry-After
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    took = time.monotonic() - sent
    assert proc.returncode == 130, err
    assert took < 5, f"stopped {took:.2f} s after the second Ctrl-C"
    print(f"stopped {took:.2f} s after the second Ctrl-C")
    run = record(out)
    assert run["interrupted"] is True and [s["id"] for s in run["scenarios"]] == ["alpha"]
    assert any("-beta-" in s for s in run_scopes(cortex.url, run_id))  # the cleanup was cut short ...

    cortex.faults(clear=True)
    resumed = memeval_resume(out, run_env(cortex.url))
    assert resumed.returncode == 0, resumed.stderr
    assert run_scopes(cortex.url, run_id) == []  # ... and the resumed run removed what it left


def test_ctrl_c_while_the_model_answers_still_writes_what_the_engine_measured(cortex: RunningServer,
                                                                              tmp_path: Path) -> None:
    with start_server("mock_inference", ["--latency", "1.5"]) as mock:
        out = tmp_path / "out"
        env = {**run_env(cortex.url), "EVAL_LLM_URL": f"{mock.url}/v1", "MEMEVAL_CACHE_DIR": str(tmp_path / "cache")}
        proc = start_run(out, env, "--only", "alpha", "--llm")
        wait_for(lambda: finished(out, "alpha"), "alpha to finish", proc=proc)
        wait_for(lambda: httpx.get(f"{mock.url}/_mock/stats").json()["calls"]["chat"], "the first answer", proc=proc)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
    assert proc.returncode == 130, err
    assert took < 5, f"stopped {took:.2f} s after Ctrl-C"  # at most the answer calls in flight (1.5 s each)
    print(f"stopped {took:.2f} s after Ctrl-C while answering")
    run = record(out)
    assert run["interrupted"] is True and run["answerer"] is None
    assert [s["status"] for s in run["scenarios"]] == ["ok"] and {p["status"] for p in run["probes"]} == {"scored"}
    assert f"--resume {out}" in err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_ctrl_c_or_sigterm_stops_the_engine_server_the_run_started(tmp_path: Path, sig: signal.Signals) -> None:
    out = tmp_path / "out"
    env = run_env(None, FAKE_CORTEX_HIDE_LISTINGS="1")  # memeval starts the fake itself; alpha never settles
    proc = subprocess.Popen([*MEMEVAL, "run", THREE, "--engine", FAKE_DEF, "--out", str(out), "--quiet"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: started_tenants(out, "alpha"), "alpha to start", proc=proc)
    log = (out / "server.log").read_text()
    pid = int(re.search(r"server pid (\d+)", log).group(1))
    url = re.search(r"listening on (http://\S+)", log).group(1)
    run_id = run_id_of(out)
    # alpha has written: its writes never become visible, so it stays in the scenario until the signal
    wait_for(lambda: any("-alpha-" in s for s in run_scopes(url, run_id)), "alpha's first write", proc=proc)
    sent = time.monotonic()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    took = time.monotonic() - sent
    assert proc.returncode == 130, err
    assert took < 5, f"stopped {took:.2f} s after {sig.name}"
    print(f"stopped {took:.2f} s after {sig.name}")
    assert record(out)["interrupted"] is True and record(out)["scenarios"] == []
    assert "server exited with code 0" in (out / "server.log").read_text()  # stopped with SIGTERM, cleanly
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_ctrl_c_during_a_scenarios_own_erasures_keeps_it_and_resume_finishes_the_cleanup(
        cortex: RunningServer, tmp_path: Path) -> None:
    out = tmp_path / "out"
    cortex.faults(garble=[{"route": "v1/erasures", "mode": "hang", "count": 1}])
    proc = start_run(out, run_env(cortex.url), "--only", "alpha")
    wait_for(lambda: not cortex.faults()["garble"], "alpha's first erasure (it hangs)", proc=proc)
    try:
        _ctrl_c(proc, within=4)
        run = record(out)
        assert run["interrupted"] is True and [s["id"] for s in run["scenarios"]] == ["alpha"]
        alpha = run["scenarios"][0]
        assert alpha["cleanup"]["forgotten"] is False and "interrupted" in alpha["cleanup"]["reason"]
        assert {p["status"] for p in run["probes"]} == {"scored"}  # what it measured is kept
        run_id = run_id_of(out)
        assert run_scopes(cortex.url, run_id)
        resumed = memeval_resume(out, run_env(cortex.url), "--only", "alpha")
        assert resumed.returncode == 0, resumed.stderr
        assert run_scopes(cortex.url, run_id) == []
    finally:
        erase_all(cortex.url)


def test_ctrl_c_while_the_engine_hangs_stops_within_seconds(cortex: RunningServer, tmp_path: Path) -> None:
    out = tmp_path / "out"
    cortex.faults(garble=[{"route": "v1/recall", "mode": "hang", "count": 1000}])
    proc = start_run(out, run_env(cortex.url), "--only", "alpha")
    wait_for(lambda: cortex.faults()["garble"][0]["count"] < 1000, "a recall (it hangs)", proc=proc)
    time.sleep(0.3)
    try:
        _ctrl_c(proc, within=4)  # not timeout_s (60 s) times the attempts
        cortex.faults(clear=True)
        assert record(out)["interrupted"] is True
        assert run_scopes(cortex.url, run_id_of(out)) == []  # the cleanup (not hanging) still ran
    finally:
        erase_all(cortex.url)
