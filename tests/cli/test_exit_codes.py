"""One test per exit code, through the real command line: 0 ok, 1 gate or regression, 2 bad spec or
usage, 3 engine or infrastructure failure, 130 interrupted (all mapped by
:func:`memeval.errors.exit_code`)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from memeval.errors import Outcome, exit_code
from tests.comparison.factory import hits, run
from tests.conftest import FIXTURES, MEMEVAL, ROOT, cli

MINI = os.path.join(FIXTURES, "mini.yaml")
FAKE_DEF = os.path.join(ROOT, "engines", "fake-cortex.yaml")


def dead_url() -> str:
    """A loopback URL nothing listens on (the port was just free)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_the_mapping_is_the_documented_one() -> None:
    assert {o: exit_code(o) for o in Outcome} == {Outcome.OK: 0, Outcome.GATE: 1, Outcome.USAGE: 2,
                                                  Outcome.ENGINE: 3, Outcome.INTERRUPTED: 130}


def test_0_ok(capsys) -> None:
    assert cli(["validate", MINI]) == 0
    assert capsys.readouterr().out == f"{MINI}: ok (suite mini: 1 scenario, 8 probes)\n"


def test_1_a_regression_with_fail_on_regression(tmp_path: Path, capsys) -> None:
    paths = []
    for name, count in (("baseline", 19), ("worse", 4)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(run(hits(count, 20), label=name, profile=name).to_json()))
        paths.append(str(path))
    assert cli(["compare", *paths]) == 0
    capsys.readouterr()
    assert cli(["compare", *paths, "--fail-on-regression"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: 3 regression(s): worse: pack hit (synthesis); "), err


def test_2_a_bad_spec_and_a_bad_command_line(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("suite: x\nscenarios: 3\n")
    assert cli(["validate", str(bad)]) == 2
    assert f"{bad}:2:" in capsys.readouterr().err
    assert cli(["run", MINI, "--no-such-option"]) == 2
    assert "No such option" in capsys.readouterr().err


def test_3_an_engine_that_cannot_be_reached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    url = dead_url()
    monkeypatch.setenv("CORTEX_DB_URL", url)
    assert cli(["run", MINI, "--engine", "cortex", "--out", str(tmp_path), "--quiet"]) == 3
    assert capsys.readouterr().err == ("error: cortex GET v1/auth/whoami: ConnectError: [Errno 111] Connection refused "
                                       "after 3 attempts\n")


@pytest.mark.slow
def test_130_interrupted_and_the_printed_resume_command_works(tmp_path: Path) -> None:
    """Ctrl-C on a run of the fake-cortex engine prints how to resume; that exact command, run as
    printed, continues the run on the same engine (taken from the journal) and exits 0."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "FAKE_CORTEX_"))}
    slow = {**env, "FAKE_CORTEX_INDEX_DELAY": "30"}  # writes are never listed in time: the run waits
    proc = subprocess.Popen([*MEMEVAL, "run", MINI, "--engine", FAKE_DEF, "--enrich-wait", "0", "--quiet"],
                            cwd=tmp_path, env=slow, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    journal = tmp_path / "runs" / "fake-cortex" / "latest" / "checkpoint.jsonl"
    deadline = time.monotonic() + 60
    while not (journal.exists() and '"started"' in journal.read_text()):
        assert proc.poll() is None and time.monotonic() < deadline, "the run did not start a scenario"
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    hint = err.strip().splitlines()[-1]
    assert hint.startswith("interrupted: resume with: memeval run "), err
    command = shlex.split(hint.split("resume with: ", 1)[1])
    assert command[:2] == ["memeval", "run"] and "--engine" not in command
    resumed = subprocess.run([*MEMEVAL, *command[1:]], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    record = json.loads((journal.parent / "run.json").read_text())
    assert record["engine"]["name"] == "cortex" and record["options"]["engine"] == "fake-cortex"
    assert record["interrupted"] is False and record["options"]["enrich_wait_s"] == 0
