"""``memeval run --repeat N``: N independent runs and one churn report (flip rate, KPI spread)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memeval.errors import UsageError
from memeval.record import RunRecord
from memeval.runner.repeat import churn, render_churn, run_repeats
from memeval.runner.session import RunRequest
from tests.comparison.factory import hits, run
from tests.conftest import FIXTURES, cli


def test_repeat_runs_the_suite_n_times_with_fresh_ids_and_reports_churn(tmp_path: Path):
    out = tmp_path / "rep"
    assert cli(["run", f"{FIXTURES}/mini.yaml", "--repeat", "3", "--out", str(out), "--quiet"]) == 0
    records = [RunRecord.from_json(json.loads((out / f"repeat-{i}" / "run.json").read_text())) for i in (1, 2, 3)]
    assert len({r.run_id for r in records}) == 3
    data = json.loads((out / "repeats.json").read_text())
    assert data["runs"] == [r.run_id for r in records]
    hit = next(f for f in data["flips"] if f["kpi"] == "pack hit (synthesis)")
    assert hit["n"] > 0 and hit["k"] == 0  # the reference engine is deterministic
    text = (out / "repeats.md").read_text()
    assert "| pack hit (synthesis) | 0 |" in text and "| accuracy | pack hit (synthesis) | 3 |" in text


def test_churn_counts_a_probe_that_flipped_and_the_kpi_spread():
    a, b = run(hits(10, 20)), run(hits(12, 20))
    data = churn([a, b])
    hit = next(f for f in data.flips if f.kpi == "pack hit (synthesis)")
    assert (hit.k, hit.n, hit.rate) == (2, 20, 0.1)
    spread = next(s for s in data.spread if s.name == "pack hit (synthesis)")
    assert (spread.low, spread.high, spread.n) == (50.0, 60.0, 2)
    assert "| pack hit (synthesis) | 2 | 20 | 10.0% |" in render_churn(data)


def test_repeat_below_two_or_with_resume_is_refused(tmp_path: Path, capsys):
    assert cli(["run", f"{FIXTURES}/mini.yaml", "--repeat", "2", "--json", str(tmp_path / "x.json")]) == 2
    assert "--repeat cannot be combined" in capsys.readouterr().err
    assert cli(["run", f"{FIXTURES}/mini.yaml", "--repeat", "2", "--resume", str(tmp_path)]) == 2
    assert "--repeat cannot be combined" in capsys.readouterr().err
    with pytest.raises(UsageError, match="give at least 2"):  # the CLI runs --repeat 1 as one plain run
        run_repeats(RunRequest(f"{FIXTURES}/mini.yaml"), 1, print, print)
