"""Records of an older run.json format are upgraded on read (memeval.record.migrate), tested from
CHECKED-IN records of format 1: tests/fixtures/records/v1/ (written by memeval at format 1:
``memeval run specs/agent-memory.yaml --only parking`` on the reference engine, ``--only
contradictions`` on the fake CortexDB, and suites streaming the small LongMemEval and LoCoMo
files of tests/datasets/files.py) and the older records beside them (tests/fixtures/records/,
written before probes kept their haystacks; the sweep's, before the scoring setup was kept).

Each upgrades, round-trips, renders and compares; a newer format is refused in one line, exit 2.
"""

from __future__ import annotations

import glob
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from memeval.comparison import compare_files, render_comparison
from memeval.errors import exit_code, outcome_of
from memeval.record import FORMAT_VERSION, Migrated, RecordError, RunRecord
from memeval.record.migrate import upgrade, v1_to_v2
from memeval.report.render import render
from tests.conftest import FIXTURES, cli

RECORDS = os.path.join(FIXTURES, "records")
V1 = sorted(glob.glob(os.path.join(RECORDS, "v1", "*.json")))
OLDER = sorted(glob.glob(os.path.join(RECORDS, "*.json"))) + sorted(
    p for p in glob.glob(os.path.join(RECORDS, "sweep", "*.json")) if not p.endswith("summary.json"))


def _raw(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def test_the_checked_in_records_are_format_1() -> None:
    assert len(V1) == 4 and all(_raw(p)["format_version"] == 1 for p in V1 + OLDER)


@pytest.mark.parametrize("path", V1 + OLDER, ids=os.path.basename)
def test_a_format_1_record_upgrades_and_round_trips(path: str) -> None:
    raw = _raw(path)
    record = RunRecord.from_json(raw, path)
    assert record.format_version == FORMAT_VERSION == 2
    assert record.migrated is not None and record.migrated.source == 1
    text = record.dumps()
    again = RunRecord.from_json(json.loads(text))
    assert again == record and again.dumps() == text
    assert json.loads(text)["migrated"]["from"] == 1
    # apart from the version and the note, the upgrade only adds what it lists as derived
    upgraded = json.loads(text)
    upgraded.pop("migrated"), raw.pop("format_version"), upgraded.pop("format_version")
    if "setup.grading.cluster" in record.migrated.derived:
        upgraded["setup"]["grading"].pop("cluster")
    assert upgraded["options"].pop("jobs") == 1  # format 1 ran one scenario at a time
    assert upgraded == raw


@pytest.mark.parametrize("path", V1 + OLDER[:2], ids=os.path.basename)
def test_an_upgraded_record_renders(path: str) -> None:
    record = RunRecord.from_json(_raw(path), path)
    text = render(record, "run.md.j2")
    assert text.startswith("#") and record.suite.name in text
    assert all(s.id in text for s in record.scenarios) and "pack hit" in text


def test_an_upgraded_record_compares_with_its_current_self(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    v1 = os.path.join(RECORDS, "v1", "fake-cortex-contradictions.json")
    v2 = tmp_path / "run.json"
    v2.write_text(replace(RunRecord.from_json(_raw(v1)), label="upgraded").dumps(), encoding="utf-8")
    text = render_comparison(compare_files([v1, str(v2)], None))
    assert "None: no probe outcome differs from the baseline." in text and "upgraded" in text
    assert cli(["compare", v1, str(v2)]) == 0
    assert capsys.readouterr().out == text


def test_what_a_current_format_1_writer_left_out_is_not_called_absent() -> None:
    # Written by the memeval of format 1 just before format 2: nothing was left out.
    for path in V1:
        record = RunRecord.from_json(_raw(path), path)
        assert record.migrated == Migrated(1, (), ()), path


def test_an_older_writer_s_gaps_are_listed_and_what_the_file_determines_is_filled() -> None:
    mini = RunRecord.from_json(_raw(os.path.join(RECORDS, "mini-llm.json")))
    assert mini.migrated is not None and mini.migrated.derived == ("setup.grading.cluster",)
    assert mini.setup is not None and mini.setup.grading.cluster == "scenario"
    assert {"probes[].haystack_tokens", "stuffing.tokens_stored", "answerer.cache.reused"} <= set(mini.migrated.absent)
    assert all(p.haystack_tokens is None for p in mini.probes)
    cell = RunRecord.from_json(_raw(os.path.join(RECORDS, "sweep", "baseline-r1.json")))
    assert cell.migrated is not None and cell.setup is None and cell.stuffing is None
    assert cell.migrated.absent == ("setup", "stuffing", "engine_unsupported", "probes[].haystack_tokens",
                                    "probes[].haystack_items", "kpis[].clustered")


def test_a_gap_the_rest_of_the_file_explains_is_not_absent() -> None:
    raw = _raw(V1[0])
    raw.pop("stuffing")  # probes carry haystacks: this writer had the check, so there was nothing to check
    assert "stuffing" not in v1_to_v2(raw)["migrated"]["absent"]
    for probe in raw["probes"]:
        probe.pop("haystack_tokens")
    assert "stuffing" in v1_to_v2(raw)["migrated"]["absent"]


def test_the_step_leaves_its_input_alone() -> None:
    raw = _raw(os.path.join(RECORDS, "mini-llm.json"))
    before = json.dumps(raw)
    out = v1_to_v2(raw)
    assert json.dumps(raw) == before and out["format_version"] == 2 and "cluster" in out["setup"]["grading"]


def test_a_current_record_is_read_as_it_is() -> None:
    record = RunRecord.from_json(_raw(V1[0]))
    data = record.to_json()
    data.pop("migrated")
    assert upgrade(data, FORMAT_VERSION, "run.json") is data
    assert RunRecord.from_json(data).migrated is None


@pytest.mark.parametrize("version", [3, 99])
def test_a_newer_format_is_refused_in_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      version: int) -> None:
    raw = _raw(V1[0])
    raw["format_version"] = version
    path = tmp_path / "run.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(RecordError) as err:
        RunRecord.from_json(raw, str(path))
    assert exit_code(outcome_of(err.value)) == 2 and "\n" not in str(err.value)
    assert cli(["compare", str(path), V1[0]]) == 2
    err_text = capsys.readouterr().err
    assert f"format_version {version} (written by a newer memeval)" in err_text


def test_what_scoring_computes_again_is_no_longer_absent() -> None:
    from memeval.score.derive import derive

    cell = RunRecord.from_json(_raw(os.path.join(RECORDS, "sweep", "baseline-r1.json")))
    again = derive(cell)
    assert again.setup is not None and again.engine_unsupported is not None
    assert again.migrated == Migrated(1, ("probes[].haystack_tokens", "probes[].haystack_items"), ())
    assert derive(RunRecord.from_json(again.to_json())).migrated == again.migrated
