"""Secrets and paths: API keys come only from the environment and appear in no output (files,
stdout, stderr, error lines), and ``--label`` cannot name a folder outside ``runs/``."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memeval.servers.launch import RunningServer, start_server
from memeval.report.files import read_run
from tests.conftest import cli
from tests.reliability.support import FAKE_DEF, MEMEVAL, THREE, run_args, run_env

CORTEX_SECRET = "sk-planted-cortex-7f3a9c1e5b"
LLM_SECRET = "sk-planted-llm-2d8e6a4f0c"


@pytest.fixture(scope="module")
def mock() -> Iterator[RunningServer]:
    with start_server("mock_inference") as running:
        yield running


def leaks(folder: Path, *texts: str) -> list[str]:
    """Where either planted key shows: file paths under ``folder`` and indexes of ``texts``."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        found += [f"{path}: {s}" for s in (CORTEX_SECRET, LLM_SECRET) if s.encode() in data]
    found += [f"text {i}: {s}" for i, t in enumerate(texts) for s in (CORTEX_SECRET, LLM_SECRET) if s in t]
    return found


@pytest.mark.slow


def test_planted_keys_reach_no_output_file_stdout_or_stderr(mock: RunningServer, tmp_path: Path) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache"
    env = run_env(None, key=CORTEX_SECRET, EVAL_LLM_URL=f"{mock.url}/v1", EVAL_LLM_KEY=LLM_SECRET,
                  MEMEVAL_CACHE_DIR=str(cache))  # memeval starts the fake itself
    args = [*MEMEVAL, "run", THREE, "--engine", FAKE_DEF, "--out", str(out), "--enrich-wait", "0", "--llm"]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=90, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert {"run.json", "run.md", "server.log", "checkpoint.jsonl", "library.log"} <= set(os.listdir(out))
    assert "answered" in proc.stderr and "# " in proc.stdout  # the answerer ran, the report was printed
    chat_calls = httpx.get(f"{mock.url}/_mock/stats").json()["calls"]["chat"]
    assert chat_calls > 0
    assert leaks(tmp_path, proc.stdout, proc.stderr) == []  # output folder, answer cache, stdout, stderr


@pytest.mark.slow


def test_a_wrong_key_fails_with_one_line_that_does_not_show_it(fake: RunningServer, tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = run_env(fake.url, key=CORTEX_SECRET)
    proc = subprocess.run(run_args(out), env=env, capture_output=True, text=True, timeout=60, cwd=str(tmp_path))
    assert proc.returncode == 3, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    assert "401 UNAUTHORIZED" in errors[0] and "check CORTEX_DB_KEY" in errors[0]
    assert leaks(tmp_path, proc.stdout, proc.stderr) == []


@pytest.mark.slow


def test_a_refusing_model_endpoint_stops_the_answerer_without_showing_its_key(mock: RunningServer, fake: RunningServer,
                                                                              tmp_path: Path) -> None:
    rule = {"status": 401, "count": 1000, "route": "chat"}
    mock.faults(clear=True, fail=[rule])
    try:
        out = tmp_path / "out"
        env = {**run_env(fake.url), "EVAL_LLM_URL": f"{mock.url}/v1", "EVAL_LLM_KEY": LLM_SECRET,
               "MEMEVAL_CACHE_DIR": str(tmp_path / "cache")}
        proc = subprocess.run(run_args(out, "--only", "alpha", "--llm"), env=env, capture_output=True, text=True,
                              timeout=60, cwd=str(tmp_path))
    finally:
        mock.faults(clear=True)
    assert proc.returncode == 0, proc.stderr  # the engine part ran; answers are left unanswered, not failed
    assert "401" in proc.stderr
    assert leaks(tmp_path, proc.stdout, proc.stderr) == []


@pytest.mark.parametrize("label", ["../x", "/etc", "a/b", "..", ".hidden", "a\\b"])
def test_a_label_cannot_name_a_folder_outside_runs(label: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    for extra in ([], ["--out", str(tmp_path / "given")]):
        assert cli(["run", THREE, "--label", label, *extra]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: --label {label!r}: use letters, digits") and err.count("\n") == 1
    assert os.listdir(tmp_path) == []  # nothing was created, under runs/ or elsewhere


DB_PASSWORD = "pw-canary-9d1f27"
APIKEY = "sk-canary-apikey-41b7e0"


@pytest.mark.slow
def test_secrets_echoed_by_a_server_are_masked_in_every_output(tmp_path: Path) -> None:
    # the fake (started by memeval) reports CORTEX_* flags holding credentials, and answers the
    # first recalls with an error code that echoes the Authorization header
    out = tmp_path / "out"
    env = run_env(None, key=CORTEX_SECRET, CORTEX_DATABASE_URL=f"postgres://memeval:{DB_PASSWORD}@db:5432/cortex",
                  CORTEX_LLM_APIKEY=APIKEY, FAKE_CORTEX_FAIL=f"v1/recall:500:3:BAD_AUTH Bearer {CORTEX_SECRET}")
    args = [*MEMEVAL, "run", THREE, "--engine", FAKE_DEF, "--out", str(out), "--enrich-wait", "0"]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=90, cwd=str(tmp_path))
    assert proc.returncode == 3, proc.stderr
    assert "500 BAD_AUTH Bearer ***" in proc.stderr  # the code is shown, the key in it is not
    run = read_run(str(out / "run.json")).to_json()
    assert run["flags"]["CORTEX_DATABASE_URL"] == "***" and run["flags"]["CORTEX_LLM_APIKEY"] == "***"
    found = [f"{path.name}: {canary}" for path in sorted(out.rglob("*")) if path.is_file()
             for canary in (CORTEX_SECRET, DB_PASSWORD, APIKEY) if canary.encode() in path.read_bytes()]
    found += [f"std: {canary}" for canary in (CORTEX_SECRET, DB_PASSWORD, APIKEY)
              if canary in proc.stdout + proc.stderr]
    assert found == []
