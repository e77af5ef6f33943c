"""Checkpoint and resume: a ``memeval run`` process killed with SIGKILL in its second scenario is
resumed from ``runs/<label>`` and ends with the run.json an uninterrupted run writes (volatile
fields aside), and what the killed attempt wrote is gone from the engine."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from memeval.servers.launch import RunningServer
from tests.reliability.support import (finished, journal, memeval_resume, memeval_run, normalise,
                                       record, run_env, run_id_of, run_scopes, scopes, start_fake, start_run,
                                       wait_for)

pytestmark = pytest.mark.slow  # every test here starts a process or uses one a fixture started


@pytest.fixture(scope="module")
def fake() -> Iterator[RunningServer]:
    # No background enrichment (its jobs wait out a long quiet period): the engine's usage
    # counters then move only with the run's own calls, so usage compares exactly too. With it,
    # a job finishing late is billed to whichever scenario is running, and a killed attempt's
    # jobs to the resumed one.
    with start_fake(CORTEX_ENRICHMENT_SCOPE_QUIET_MS="600000") as running:
        yield running


def test_a_run_killed_in_its_second_scenario_resumes_to_the_uninterrupted_result(
        fake: RunningServer, tmp_path: Path) -> None:
    env = run_env(fake.url)
    whole = memeval_run(tmp_path / "whole", env, "--label", "rel")
    assert whole.returncode == 0, whole.stderr
    expected = record(tmp_path / "whole")

    folder = tmp_path / "runs" / "rel" / "latest"  # no --out: runs/<label>/<run id>, named by latest
    fake.faults(index_delay=1.5)  # writes now take 1.5 s to be listed: the kill lands while beta settles
    proc = start_run(None, env, "--label", "rel", cwd=tmp_path)
    wait_for(lambda: finished(folder, "alpha"), "alpha to finish", proc=proc)
    run_id = run_id_of(folder)
    wait_for(lambda: any("-beta-" in s for s in run_scopes(fake.url, run_id)), "beta's first write", proc=proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    assert not (folder / "run.json").exists()
    assert any("-beta-" in s for s in run_scopes(fake.url, run_id))  # the killed attempt left data
    fake.faults(clear=True)

    resumed = memeval_resume(Path("runs", "rel"), env, cwd=tmp_path)  # memeval run … --resume runs/rel
    assert resumed.returncode == 0, resumed.stderr
    final = record(folder)
    kept = next(e for e in journal(folder) if e["kind"] == "finished")
    assert final["scenarios"][0]["ms"] == kept["scenario"]["ms"]  # alpha was taken from the checkpoint, not re-run
    assert final["run_id"] == run_id and final["interrupted"] is False
    assert normalise(final) == normalise(expected)
    assert scopes(fake.url) == []  # the killed attempt's leftovers were cleaned: the fake holds no event
