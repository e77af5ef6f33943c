"""Output folders and servers shared by mistake: symbolic links planted in a run folder are never
followed, two runs into one ``--out`` cannot interleave (the second is refused), and a run never
measures a server it did not start (another one on its port). ``memeval run`` and the fake
CortexDB are real processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from memeval.servers.launch import RunningServer
from tests.reliability.support import FAKE_DEF, MEMEVAL, THREE, journal, memeval_run, record, run_env, start_fake, \
    start_run, wait_for

pytestmark = pytest.mark.slow  # every test here starts a process or uses one a fixture started


def _fake_run(out: Path, engine: str = FAKE_DEF, *extra: str) -> subprocess.CompletedProcess[str]:
    """``memeval run`` on an engine definition that starts its own server."""
    args = [*MEMEVAL, "run", THREE, "--engine", engine, "--out", str(out), "--quiet", "--enrich-wait", "0",
            "--only", "alpha", *extra]
    return subprocess.run(args, env=run_env(None), capture_output=True, text=True, timeout=90, cwd=str(out.parent))


@pytest.mark.parametrize("name", ["checkpoint.jsonl", "server.log", "library.log"])
def test_a_symbolic_link_in_the_run_folder_is_never_followed(tmp_path: Path, name: str) -> None:
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / name).symlink_to(outside)
    done = _fake_run(out, FAKE_DEF, "--force")
    assert done.returncode == 2, done.stderr
    assert "a symbolic link is refused" in done.stderr and "Traceback" not in done.stderr
    assert outside.read_text() == "keep me\n"


def test_a_second_run_into_a_folder_in_use_is_refused_and_the_first_completes(cortex: RunningServer,
                                                                             tmp_path: Path) -> None:
    out = tmp_path / "out"
    cortex.faults(index_delay=6)  # the first run settles slowly: it is surely alive for the second
    first = start_run(out, run_env(cortex.url), "--only", "alpha")
    wait_for(lambda: journal(out), "the first run's journal", proc=first)
    second = memeval_run(out, run_env(cortex.url), "--only", "alpha", "--force")
    assert second.returncode == 2, second.stderr
    assert "in use by another memeval run" in second.stderr
    _, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert [s["status"] for s in record(out)["scenarios"]] == ["ok"]
    kinds = [e["kind"] for e in journal(out)]
    assert kinds == ["header", "started", "finished"]  # one run's journal, not two interleaved


def _engine_def(tmp_path: Path, start: list[str], url: str) -> str:
    items = ", ".join(f'"{a}"' for a in start)
    path = tmp_path / "own-fake.yaml"
    path.write_text(f"engine: own-fake\nadapter: cortex\nserver:\n  start: [{items}]\n  ready: /v1/admin/ready\n"
                    f"  ready_timeout_s: 20\n  url: {url}\n")
    return str(path)


def test_a_server_that_is_not_the_one_started_is_never_measured(tmp_path: Path) -> None:
    # the started process answers with a nonce of its own, as another sweep's server on the port would
    start = ["env", "MEMEVAL_SERVER_NONCE=someone-else", sys.executable, "-m", "memeval.servers.fake_cortex",
             "--port", "{port}"]
    engine = _engine_def(tmp_path, start, "http://127.0.0.1:{port}")
    done = _fake_run(tmp_path / "out", engine)
    assert done.returncode == 3, done.stderr
    assert "is answered by another server (its nonce is not ours)" in done.stderr
    assert not (tmp_path / "out" / "run.json").exists() or record(tmp_path / "out")["scenarios"] == []


def test_a_port_another_server_holds_is_refused_before_starting(tmp_path: Path) -> None:
    with start_fake() as other:
        port = str(urlsplit(other.url).port)
        start = [sys.executable, "-m", "memeval.servers.fake_cortex", "--port", port]
        engine = _engine_def(tmp_path, start, f"http://127.0.0.1:{port}")
        done = _fake_run(tmp_path / "out", engine)
    assert done.returncode == 3, done.stderr
    assert f"port {port} is already in use" in done.stderr
