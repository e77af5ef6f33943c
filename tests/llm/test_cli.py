"""``memeval run --llm`` and ``memeval regrade`` as real processes, with the mock server."""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.llm.conftest import MINI, SECRET, Mock, memeval

pytestmark = pytest.mark.slow  # every test here starts a process or uses one a fixture started


def _env(mock: Mock, home: Path, **extra: str) -> dict[str, str]:
    return {"EVAL_LLM_URL": mock.url, "EVAL_LLM_KEY": SECRET, "OPENROUTER_API_KEY": "", "HOME": str(home),
            "MEMEVAL_CACHE_DIR": str(home / "cache"), **extra}


@pytest.fixture(scope="module")
def llm_run(mock_server: Mock, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """``memeval run mini.yaml --llm --judge`` with a planted key: its folder and output."""
    home = tmp_path_factory.mktemp("llm-run")
    proc = memeval("run", MINI, "--llm", "--judge", "--cache-salt", "r1", "--out", str(home / "out"),
                   env=_env(mock_server, home))
    assert proc.returncode == 0, proc.stderr
    return {"home": home, "out": home / "out", "text": proc.stdout + proc.stderr,
            "record": json.loads((home / "out" / "run.json").read_text())}


def test_run_llm_end_to_end(llm_run: dict[str, Any]) -> None:
    record = llm_run["record"]
    assert record["options"]["llm"] is True
    a = record["answerer"]
    assert a["answered"] == a["probes"] == 15 and a["cache"]["salt"] == "r1"
    assert a["judge"]["leniency"]["n"] == 17
    kpis = {k["name"]: k for k in record["kpis"]}
    assert kpis["model answer"]["value"] is not None and kpis["answerer tokens"]["value"] == a["tokens"]
    report = (llm_run["out"] / "run.md").read_text()
    assert "## Answerer" in report and "`answer-v1`" in report
    assert "| Leniency check (planted wrong answers) | rejected 88% (15/17), false acceptance 12% (2/17); " in report
    assert "answerer: 15 of 15 probes answered" in llm_run["text"]


def test_planted_key_appears_nowhere(llm_run: dict[str, Any], mock_server: Mock) -> None:
    assert SECRET not in llm_run["text"]
    files = [p for p in llm_run["home"].rglob("*") if p.is_file()]
    assert any(p.parent.parent.name == "cache" for p in files)
    for path in files:
        assert SECRET not in path.read_text(errors="replace"), path
    assert SECRET not in mock_server.server.stderr_tail(100_000)


def test_missing_key_for_a_remote_url_is_a_usage_error(mock: Mock, tmp_path: Path) -> None:
    env = _env(mock, tmp_path, EVAL_LLM_URL="https://models.example.invalid/v1", EVAL_LLM_KEY="")
    proc = memeval("run", MINI, "--llm", "--out", str(tmp_path / "out"), env=env)
    assert proc.returncode == 2
    assert "no API key for https://models.example.invalid/v1: set EVAL_LLM_KEY" in proc.stderr
    assert not (tmp_path / "out" / "run.json").exists()


def test_regrade_only_regrades_stored_answers(llm_run: dict[str, Any], mock: Mock, tmp_path: Path) -> None:
    source = tmp_path / "run.json"
    record = copy.deepcopy(llm_run["record"])
    flipped = next(p for p in record["probes"] if p["llm_ok"] is True)
    flipped["llm_ok"] = False
    source.write_text(json.dumps(record))
    before = source.read_bytes()
    proc = memeval("regrade", str(source), "--quiet", env=_env(mock, tmp_path))
    assert proc.returncode == 0, proc.stderr
    regraded = json.loads((tmp_path / "regrade" / "run.json").read_text())
    assert mock.chat_calls() == 0 and source.read_bytes() == before
    assert [p["llm_ok"] for p in regraded["probes"]] == [p["llm_ok"] for p in llm_run["record"]["probes"]]
    assert regraded["regrade"]["from"] == str(source) and regraded["regrade"]["answered"] is False
    assert (tmp_path / "regrade" / "run.md").exists()


def test_regrade_llm_answers_from_stored_packs(mini_run: Path, mock: Mock, tmp_path: Path) -> None:
    source = tmp_path / "run.json"
    shutil.copy(mini_run, source)
    proc = memeval("regrade", str(source), "--llm", "--no-cache", "--quiet", env=_env(mock, tmp_path))
    assert proc.returncode == 0, proc.stderr
    regraded = json.loads((tmp_path / "regrade" / "run.json").read_text())
    assert mock.chat_calls() == 15 and regraded["answerer"]["answered"] == 15
    assert {k["name"]: k for k in regraded["kpis"]}["model answer"]["value"] is not None


def test_refusal_prints_one_line_and_still_writes(mini_run: Path, mock: Mock, tmp_path: Path) -> None:
    mock.fail(401)
    proc = memeval("regrade", str(mini_run), "--llm", "--no-cache", "--quiet", "--out", str(tmp_path),
                   env=_env(mock, tmp_path))
    assert proc.returncode == 0
    stopped = [line for line in proc.stderr.splitlines() if "stopped" in line]
    assert len(stopped) == 1
    line = re.fullmatch(rf"answerer stopped: HTTP 401 from {re.escape(mock.url)}: Incorrect API key provided; "
                        r"(\d+) of 15 probes answered, (\d+) left unanswered", stopped[0])
    assert line is not None, stopped[0]
    record = json.loads((tmp_path / "run.json").read_text())
    answered = [p for p in record["probes"] if p["llm_answer"] is not None]
    # calls already in flight (concurrency 4) finish; nothing is asked once the refusal is seen
    assert len(answered) == int(line.group(1)) == mock.chat_calls() - 1 < 8
    assert all(p["llm_ok"] is None for p in record["probes"] if p["llm_answer"] is None)
    assert SECRET not in proc.stdout + proc.stderr + (tmp_path / "run.md").read_text()


def test_regrade_never_overwrites_its_input(mini_run: Path, mock: Mock) -> None:
    proc = memeval("regrade", str(mini_run), "--out", str(mini_run.parent), env=_env(mock, mini_run.parent))
    assert proc.returncode == 2 and "would overwrite the input" in proc.stderr


def test_judging_a_run_without_model_answers_is_a_usage_error(mini_run: Path, mock: Mock, tmp_path: Path) -> None:
    proc = memeval("regrade", str(mini_run), "--judge", "--out", str(tmp_path), env=_env(mock, tmp_path))
    assert proc.returncode == 2 and "has none; add --llm" in proc.stderr and mock.chat_calls() == 0


def test_openai_is_imported_only_to_call_a_model() -> None:
    code = "import sys, memeval.cli, memeval.llm.answer, memeval.llm.judge; print('openai' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "False", proc.stderr
