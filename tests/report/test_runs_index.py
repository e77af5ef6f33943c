"""``memeval ls`` and ``memeval compare --latest N LABEL``: the runs under a folder found by their
run.json files, newest first, and a label's last runs compared without finding paths."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

import memeval
from memeval.record import RunRecord
from tests.conftest import FIXTURES, cli

MINI = os.path.join(FIXTURES, "mini.yaml")


@pytest.fixture(scope="module")
def record() -> RunRecord:
    return memeval.run(MINI, engine="reference")


def _publish(base: RunRecord, folder: Path, label: str, run_id: str, created_at: str) -> None:
    memeval.publish(dataclasses.replace(base, label=label, run_id=run_id, created_at=created_at), str(folder))


@pytest.fixture
def runs(tmp_path: Path, record: RunRecord) -> Path:
    root = tmp_path / "runs"
    _publish(record, root / "a" / "2", "a", "2", "2026-12-02T10:00:00Z")
    _publish(record, root / "a" / "1", "a", "1", "2026-12-01T10:00:00Z")
    _publish(record, root / "b" / "3", "b", "3", "2026-12-03T10:00:00Z")
    (root / "a" / "latest").symlink_to("2")  # a link is not a second run
    (root / "broken").mkdir()
    (root / "broken" / "run.json").write_text("{not json")
    return root


def test_ls_lists_one_line_per_run_newest_first(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["ls", str(runs)]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert [line.split("  ")[:2] for line in lines] == [["b", "3"], ["a", "2"], ["a", "1"]]
    first = lines[0].split("  ")
    assert first[2:5] == ["mini", "reference", "2026-12-03T10:00:00Z"]
    assert first[5].startswith("pack hit (synthesis) ") and first[5].endswith("(n=6)")
    assert "broken/run.json: not JSON" in err  # named, never dropped in silence


def test_ls_of_a_folder_without_runs_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["ls", str(tmp_path)]) == 0
    assert capsys.readouterr().err == f"no runs under {tmp_path}\n"
    assert cli(["ls", str(tmp_path / "nope")]) == 2


def test_compare_latest_two_compares_a_labels_last_runs(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["compare", "--latest", "2", "a", "--runs", str(runs)]) == 0
    out = capsys.readouterr().out
    assert "Baseline: **a@1**" in out and "a@2" in out and "b@3" not in out


def test_compare_latest_refuses_too_few_runs_or_several_labels(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["compare", "--latest", "2", "b", "--runs", str(runs)]) == 2
    assert "1 run(s) labelled 'b'" in capsys.readouterr().err
    assert cli(["compare", "--latest", "2", "a", "b", "--runs", str(runs)]) == 2
    assert "takes one LABEL" in capsys.readouterr().err
