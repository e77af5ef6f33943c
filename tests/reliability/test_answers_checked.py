"""Engine answers are checked, and an engine error is never counted as a miss: a recall or a
synthesis read answered 200 with a body that cannot be read (cut short, ``text/html``, the wrong
shape) errors its probe and scenario (exit 3); a server trickling one byte a second is cut off by
the request's wall-clock deadline; an erasure that fails is exit 3, recorded, and finished by
``--resume``. The fake CortexDB and ``memeval run`` are real processes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memeval.servers.launch import RunningServer
from tests.reliability.support import erase_all, memeval_resume, memeval_run, record, run_env, run_id_of, run_scopes

pytestmark = pytest.mark.slow  # every test here starts a process or uses one a fixture started


def _by_id(run: dict) -> dict[str, dict]:
    return {s["id"]: s for s in run["scenarios"]}


@pytest.mark.parametrize("route, mode, phase", [
    ("v1/recall", "truncated", "recall"), ("v1/recall", "html", "recall"), ("v1/recall", "shape", "recall"),
    ("v1/facts", "truncated", "synthesis"), ("v1/beliefs", "shape", "synthesis")])
def test_an_unreadable_answer_errors_the_scenario_and_is_never_a_miss(
        cortex: RunningServer, tmp_path: Path, route: str, mode: str, phase: str) -> None:
    cortex.faults(garble=[{"route": route, "mode": mode, "count": 1000}])
    try:
        done = memeval_run(tmp_path / "out", run_env(cortex.url), "--only", "alpha")
    finally:
        cortex.faults(clear=True)
    assert done.returncode == 3, done.stderr
    run = record(tmp_path / "out")
    alpha = _by_id(run)["alpha"]
    assert alpha["status"] == "errored" and route in alpha["error"], alpha["error"]
    assert {p["status"] for p in run["probes"] if p["phase"] == phase} == {"errored"}  # never a scored miss
    assert "error: scenario alpha" in done.stderr
    assert run_scopes(cortex.url, run_id_of(tmp_path / "out")) == []  # the cleanup still ran


def _engine_file(tmp_path: Path, **settings: float) -> str:
    """A cortex engine definition (no server: ``CORTEX_DB_URL`` names it) with ``settings``."""
    lines = "".join(f"  {name}: {value}\n" for name, value in settings.items())
    path = tmp_path / "cortex-short.yaml"
    path.write_text(f"engine: cortex-short\nadapter: cortex\nsettings:\n{lines}")
    return str(path)


def test_a_trickling_server_is_cut_off_by_the_requests_deadline(cortex: RunningServer, tmp_path: Path) -> None:
    engine = _engine_file(tmp_path, timeout_s=1.5, attempts=1)
    cortex.faults(garble=[{"route": "v1/recall", "mode": "trickle", "count": 1000}])
    started = time.monotonic()
    try:
        done = memeval_run(tmp_path / "out", run_env(cortex.url), "--only", "alpha", "--engine", engine)
    finally:
        cortex.faults(clear=True)
    took = time.monotonic() - started
    assert done.returncode == 3, done.stderr
    alpha = _by_id(record(tmp_path / "out"))["alpha"]
    assert "no complete answer within 1.5 s" in alpha["error"], alpha["error"]
    assert took < 20, f"the run took {took:.1f} s"  # per read, a trickle would never time out


def test_an_erasure_that_fails_is_exit_3_recorded_and_finished_by_resume(cortex: RunningServer,
                                                                       tmp_path: Path) -> None:
    out = tmp_path / "out"
    cortex.faults(fail=[{"route": "v1/erasures", "status": 500, "count": 1000}])
    try:
        done = memeval_run(out, run_env(cortex.url), "--only", "alpha")
    finally:
        cortex.faults(clear=True)
    try:
        assert done.returncode == 3, done.stderr
        alpha = _by_id(record(out))["alpha"]
        assert alpha["status"] == "errored" and alpha["error"].startswith("cleanup failed: ")
        assert alpha["cleanup"]["forgotten"] is False and "v1/erasures: 500" in alpha["cleanup"]["reason"]
        assert "error: scenario alpha: cleanup failed" in done.stderr
        run_id = run_id_of(out)
        assert run_scopes(cortex.url, run_id)  # the data is still there ...
        resumed = memeval_resume(out, run_env(cortex.url), "--only", "alpha")
        assert resumed.returncode == 0, resumed.stderr
        assert run_scopes(cortex.url, run_id) == []  # ... and the resume removed it
        assert _by_id(record(out))["alpha"]["status"] == "ok"
    finally:
        erase_all(cortex.url)
