"""Every requirement a run will have is checked before the first engine or model call, and all
unmet ones are reported together (exit 2)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memeval.spec.engine_def import resolve_engine
from memeval.spec.load import load_suite
from memeval.runner import preflight
from tests.conftest import FIXTURES, cli

MINI = os.path.join(FIXTURES, "mini.yaml")


def test_every_unmet_requirement_is_listed_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("TINYHUMANS_API_KEY", "EVAL_LLM_KEY", "OPENROUTER_API_KEY", "EVAL_LLM_URL"):
        monkeypatch.delenv(name, raising=False)
    out = tmp_path / "run"
    assert cli(["run", MINI, "--engine", "tinyhumans", "--llm", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "2 unmet requirement(s); nothing was run" in err, err
    assert "engine tinyhumans: set TINYHUMANS_API_KEY" in err and "EVAL_LLM_KEY" in err
    assert not out.exists()  # refused before the run folder, the journal or any engine call


def test_an_engine_extra_a_server_program_and_an_executor_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preflight, "_importable", lambda module: module not in {"mem0", "dask"})
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("CORTEX_DB_URL", raising=False)
    suite = load_suite(MINI)
    mem0 = preflight.unmet(suite, resolve_engine("mem0"), os.environ, llm=False, executor="dask")
    assert mem0 == ["engine mem0 needs mem0: pip install 'memeval-harness[mem0]'",
                    "--executor dask needs dask: pip install 'memeval-harness[dask]'"]
    cortex = preflight.unmet(suite, resolve_engine("cortex"), os.environ, llm=False)
    assert cortex == ["engine cortex: its server starts 'docker', which is not on PATH (or set CORTEX_DB_URL to use a "
                      "running server)"]
    assert preflight.unmet(suite, resolve_engine("cortex"), {"CORTEX_DB_URL": "http://127.0.0.1:1"}, llm=False) == []
    assert preflight.unmet(suite, resolve_engine("reference"), os.environ, llm=True) == []
