"""Progress as typed events: every scenario's stages in order with counts; plain lines keep one
line per stage; --quiet prints only the output paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memeval.engines.reference.engine import create
from memeval.runner.options import RunOptions
from memeval.runner.progress import ProgressEvent, lines
from memeval.runner.suite import run_suite
from memeval.spec.load import load_suite
from tests.conftest import FIXTURES, cli

MINI = os.path.join(FIXTURES, "mini.yaml")


def test_events_name_each_stage_with_counts() -> None:
    events: list[ProgressEvent] = []
    run_suite(load_suite(MINI), create({"embedder": "none"}), RunOptions(label="t"), events.append)
    assert [e.step for e in events][0] == "running" and events[-1].step == "done"
    assert all(e.scenario == "office" and (e.index, e.total) == (1, 1) for e in events)
    stages = [e for e in events if e.step == "stage"]
    assert list(dict.fromkeys(e.stage for e in stages))[:4] == ["writes", "settle", "forget", "probes"]
    probes = [e for e in stages if e.stage == "probes"]
    assert [e.done for e in probes] == list(range(1, len(probes) + 1)) and probes[-1].of == len(probes)
    shown: list[str] = []
    for event in events:
        lines(shown.append)(event)
    assert shown[0] == "scenario office: running"
    # a stage's start, each quarter of it and its end: a log sees it move, not one line per probe
    assert [line for line in shown if ": probes " in line] == [f"scenario office: probes {n}/15" for n in (1, 4, 8, 12, 15)]


def test_quiet_prints_only_the_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["run", MINI, "--out", str(tmp_path / "run"), "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == [f"wrote {tmp_path / 'run' / 'run.json'}, run.md and run.html"]
