"""Ctrl-C during ``memeval run --jobs 3`` against the fake CortexDB as a process: exit 130, the
interrupted record holds no half-run scenario, and ``--resume`` completes the run with nothing of
the interrupted attempts left in the engine."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.reliability.support import (erase_all, memeval_resume, record, run_env, run_scopes, start_run,
                                       started_tenants, wait_for)

pytestmark = pytest.mark.slow


def test_ctrl_c_with_jobs_exits_130_and_resume_completes_the_run(cortex, tmp_path: Path) -> None:
    out = tmp_path / "out"
    cortex.faults(index_delay=30)  # every scenario waits for its writes to be listed
    proc = start_run(out, run_env(cortex.url), "--jobs", "3", "--settle-timeout", "60")
    try:
        for scenario in ("alpha", "beta", "gamma"):  # all three under way at once
            wait_for(lambda s=scenario: started_tenants(out, s), f"{scenario} to start", proc=proc)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        run = record(out)
        assert run["interrupted"] is True and run["scenarios"] == []
        assert "--resume" in err
        cortex.faults(index_delay=0.05)
        resumed = memeval_resume(out, run_env(cortex.url), "--jobs", "3")
        assert resumed.returncode == 0, resumed.stderr
        done = record(out)
        assert [s["id"] for s in done["scenarios"]] == ["alpha", "beta", "gamma"]
        assert all(s["status"] == "ok" for s in done["scenarios"]) and done["interrupted"] is False
        assert run_scopes(cortex.url, done["run_id"]) == []  # the interrupted attempts left nothing behind
    finally:
        erase_all(cortex.url)
