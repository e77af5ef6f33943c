"""Issue 30, point 2: every run is its own column. Runs sharing a label are never merged;
repeats are grouped only when they say so (``--repeat``, a sweep's profile, ``--group-by label``);
runs of different suites are refused unless the suite itself is allowed to differ."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

from memeval.comparison import compare_records, render_comparison
from memeval.comparison.setup import SetupMismatch
from memeval.errors import UsageError
from memeval.record import RepeatNote, RunRecord
from memeval.report.files import read_run, write_text
from tests.comparison.factory import hits, run
from tests.conftest import FIXTURES, cli


def _suite(record: RunRecord, name: str, scenarios: int) -> RunRecord:
    resolved = {"suite": name, "scenarios": [{"scenario": f"s{i}"} for i in range(scenarios)]}
    return replace(record, suite=replace(record.suite, name=name, resolved=resolved))


def test_two_runs_sharing_a_label_are_two_columns_not_one_averaged_baseline():
    a, b = run(hits(18, 20), label="reference"), run(hits(19, 20), label="reference")
    comparison = compare_records([a, b])
    assert [(p["name"], p["runs"]) for p in comparison["profiles"]] == [("reference #1", 1), ("reference #2", 1)]
    text = render_comparison(comparison)
    assert "Only the baseline was given" not in text
    assert "**reference #2**: nothing beyond noise" in text
    assert compare_records([a, b], baseline="reference")["baseline"] == "reference #1"


def test_repeats_group_only_when_they_say_so():
    first = [replace(run(hits(18, 20), label="x"), repeat=RepeatNote("g1", i, 2)) for i in (1, 2)]
    other = run(hits(18, 20), label="x")
    profiles = compare_records([*first, other])["profiles"]
    assert [(p["name"], p["runs"]) for p in profiles] == [("x #1", 2), ("x #2", 1)]
    by_label = compare_records([*first, other], group_by="label")["profiles"]
    assert [(p["name"], p["runs"]) for p in by_label] == [("x", 3)]
    with pytest.raises(UsageError, match="--group-by 'nope'"):
        compare_records([other], group_by="nope")


def test_runs_of_different_suites_are_refused_even_with_other_setup_fields_allowed():
    a = _suite(run(hits(18, 20), label="a"), "agent-memory", 15)
    b = _suite(run(hits(18, 20), label="b"), "agent-memory", 16)
    for allowed in ((), ("spec_sha256",), ("suite.x", "spec_sha256")):
        with pytest.raises(SetupMismatch, match="with 16 scenarios, not 'agent-memory' with 15"):
            compare_records([a, b], allow_setup_diff=allowed)
    comparison = compare_records([a, b], allow_setup_diff=("suite",))
    assert len(comparison["profiles"]) == 2
    assert compare_records([a, _suite(run(hits(1, 2), label="c"), "agent-memory", 15)])["baseline"] == "a"


def test_a_repeat_run_records_its_group_and_compare_keeps_it_one_column(tmp_path, capsys):
    out = tmp_path / "rep"
    assert cli(["run", os.path.join(FIXTURES, "mini.yaml"), "--repeat", "2", "--out", str(out), "--quiet"]) in (0, None)
    records = [read_run(str(out / f"repeat-{i}" / "run.json")) for i in (1, 2)]
    notes = [r.repeat for r in records]
    assert [n.index for n in notes] == [1, 2] and notes[0].group == notes[1].group and notes[0].of == 2
    single = tmp_path / "single.json"
    write_text(str(single), replace(records[0], repeat=None).dumps())
    capsys.readouterr()
    assert cli(["compare", *(str(out / f"repeat-{i}" / "run.json") for i in (1, 2)), str(single)]) in (0, None)
    text = capsys.readouterr().out
    assert "| reference #1 (baseline) | 2 |" in text and "| reference #2 | 1 |" in text
