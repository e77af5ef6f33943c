"""Small things that made a first hour look broken: file modes, counts in words, a resumed
run's date, the suite's own description of itself."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from memeval.report.files import write_text
from memeval.spec.load import load_suite
from tests.conftest import FIXTURES, ROOT, cli

MINI = os.path.join(FIXTURES, "mini.yaml")
NUMBERS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                      "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split())}


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_written_files_follow_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    old = os.umask(umask)
    try:
        write_text(str(tmp_path / "run.md"), "x\n")
    finally:
        os.umask(old)
    assert (tmp_path / "run.md").stat().st_mode & 0o777 == mode


def test_a_runs_reports_are_readable_as_the_umask_allows(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        assert cli(["run", MINI, "--out", str(tmp_path / "run"), "--quiet"]) == 0
    finally:
        os.umask(old)
    for name in ("run.json", "run.md", "run.html"):
        assert (tmp_path / "run" / name).stat().st_mode & 0o777 == 0o644, name


def test_resuming_a_finished_run_keeps_when_it_was_created(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert cli(["run", MINI, "--out", str(out), "--quiet"]) == 0
    journal = out / "checkpoint.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert header["created_at"] == json.loads((out / "run.json").read_text(encoding="utf-8"))["created_at"]
    header["created_at"] = "2026-01-02T03:04:05Z"  # a run begun long ago: a rewrite would show
    journal.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    assert cli(["run", MINI, "--resume", str(out), "--quiet"]) == 0
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["created_at"] == "2026-01-02T03:04:05Z"


def test_the_suites_comment_counts_its_scenarios_right_or_not_at_all() -> None:
    path = Path(ROOT) / "specs" / "agent-memory.yaml"
    comment = " ".join(line.lstrip("# ") for line in path.read_text(encoding="utf-8").splitlines()
                       if line.startswith("#"))
    count = len(load_suite(str(path)).scenarios)
    stated = re.findall(r"\b(\w+) (?:pieces|scenarios)\b(?! of the original)", comment)
    for word in stated:
        if word.isdigit() or word.lower() in NUMBERS:
            assert (int(word) if word.isdigit() else NUMBERS[word.lower()]) == count, (word, count)


def test_counts_are_in_the_right_number(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lme = tmp_path / "lme.json"
    assert cli(["generate", "needle", "-o", str(lme), "--events", "10"]) == 0
    assert cli(["import", "longmemeval", str(lme), "--variant", "synthetic", "-o", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "1 question in 1 unit" in out and "1 scenario, 1 probe" in out, out
