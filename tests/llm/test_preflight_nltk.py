"""A LoCoMo --llm run without nltk (LoCoMo's F1 stems with it) stops before its first engine
or model call: the preflight finds what the grader would have failed on after the work."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import MEMEVAL
from tests.datasets.files import locomo_records, write
from tests.llm.conftest import Mock


@pytest.mark.slow
def test_a_locomo_llm_run_without_nltk_stops_before_any_engine_or_model_call(tmp_path: Path, mock: Mock) -> None:
    write(tmp_path / "locomo10.json", locomo_records())
    suite = tmp_path / "locomo.yaml"
    suite.write_text("suite: locomo\nabout: LoCoMo\ndataset: {format: locomo, path: locomo10.json, grader: locomo-f1}\n")
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "nltk.py").write_text("raise ImportError('nltk is blocked by this test')\n")
    env = {**os.environ, "PYTHONPATH": str(blocked), "EVAL_LLM_URL": mock.url}
    out = tmp_path / "run"
    done = subprocess.run([*MEMEVAL, "run", str(suite), "--llm", "--out", str(out)], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert "grader locomo-f1: LoCoMo's F1 needs nltk's Porter stemmer: pip install 'memeval-harness[datasets]'" \
        in done.stderr
    stats = mock.http.get("/_mock/stats").json()["calls"]
    assert stats and all(n == 0 for n in stats.values()), stats  # not one model call
    assert not out.exists()  # nor the journal any engine call comes after
