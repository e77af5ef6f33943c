"""On a LoCoMo-format run: Wilson and cluster bootstrap intervals side by side with the number
of conversations (one scenario each), and the flip rate of ``--repeat 3``."""

from __future__ import annotations

import json

import pytest

from tests.conftest import cli
from tests.datasets.files import locomo_records, write


@pytest.mark.slow
def test_a_locomo_run_shows_both_intervals_and_the_repeat_flip_rate(tmp_path):
    src = write(tmp_path / "locomo10.json", locomo_records())
    assert cli(["import", "locomo", str(src), "-o", str(tmp_path / "lc")]) == 0
    out = tmp_path / "runs"
    assert cli(["run", str(tmp_path / "lc" / "suite.yaml"), "--repeat", "3", "--out", str(out), "--quiet"]) == 0
    record = json.loads((out / "repeat-1" / "run.json").read_text())
    conversations = {s["id"] for s in record["scenarios"]}
    assert len(conversations) == 2
    answer = next(k for k in record["kpis"] if k["name"] == "extractive answer")
    assert answer["ci95"] is not None and answer["clustered"]["clusters"] == 2 and answer["clustered"]["seed"]
    text = (out / "repeat-1" / "run.md").read_text()
    assert "| 95% CI (Wilson) | 95% CI (cluster bootstrap) |" in text and "(2 conversations) |" in text
    churn = (out / "repeats.md").read_text()
    assert "# memeval run --repeat 3" in churn and "| extractive answer | 0 |" in churn
    assert len(json.loads((out / "repeats.json").read_text())["runs"]) == 3
