"""Cleanup: runs forget everything they wrote, in every tenant, and two runs on one server never
share a tenant (one run's cleanup cannot erase another's data). Cleanup after faults is asserted
where the faults are (test_engine_faults.py, test_interrupt.py, test_resume.py)."""

from __future__ import annotations

import pytest

from pathlib import Path

from memeval.servers.launch import RunningServer
from tests.reliability.support import record, run_env, scopes, start_run

pytestmark = pytest.mark.slow  # every test here starts a process or uses one a fixture started


def test_two_runs_started_together_on_one_server_keep_apart_and_both_clean_up(fake: RunningServer,
                                                                              tmp_path: Path) -> None:
    procs = [start_run(tmp_path / f"run{i}", run_env(fake.url)) for i in (1, 2)]
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    runs = [record(tmp_path / f"run{i}") for i in (1, 2)]
    assert runs[0]["run_id"] != runs[1]["run_id"]
    tenants = [{ns for s in run["scenarios"] for ns in s["tenants"].values()} for run in runs]
    assert not tenants[0] & tenants[1]
    assert all(p["status"] == "scored" and p["hit"] for run in runs for p in run["probes"])
    assert scopes(fake.url) == []  # both runs forgot everything, in every tenant
