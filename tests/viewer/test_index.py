"""The viewer's SQLite index: one row per run and per KPI, re-read only when a run.json's
content changed, rows dropped with their files, unreadable files listed with their error, and
nothing indexed from outside the folder (links out of it are not followed)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from memeval.errors import UsageError
from memeval.report.files import read_run
from memeval.viewer.index import INDEX_NAME, RunIndex
from tests.conftest import FIXTURES, cli

MINI = os.path.join(FIXTURES, "mini.yaml")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("made")
    for key in ("a/1", "b/1"):
        assert cli(["run", MINI, "--out", str(folder / key), "--quiet", "--label", key.split("/")[0]]) == 0
    return folder


@pytest.fixture()
def root(made: Path, tmp_path: Path) -> Path:
    """A fresh copy of two real runs of the mini suite, for a test to change."""
    folder = tmp_path / "runs"
    shutil.copytree(made, folder)
    return folder


def test_rows_per_run_and_kpi(root: Path) -> None:
    index = RunIndex(str(root))
    assert index.refresh() == 2
    assert (root / INDEX_NAME).is_file()
    rows = {r.key: r for r in index.runs()}
    assert set(rows) == {"a/1", "b/1"}
    record = read_run(str(root / "a" / "1" / "run.json"))
    a = rows["a/1"]
    assert (a.label, a.suite, a.engine, a.answer_mode, a.run_id) == ("a", "mini", record.engine.name, "extractive",
                                                                    record.run_id)
    assert len(a.kpis) == len(record.kpis)
    hit = a.kpi("accuracy", "pack hit (synthesis)")
    want = next(k for k in record.kpis if k.name == "pack hit (synthesis)")
    assert hit is not None and (hit.value, hit.n, hit.ci95) == (want.value, want.n, want.ci95)
    unmeasured = a.kpi("accuracy", "model answer")
    assert unmeasured is not None and unmeasured.value is None  # "not measured" stays None, never 0


def test_only_changed_content_is_read_again(root: Path) -> None:
    index = RunIndex(str(root))
    index.refresh()
    assert index.refresh() == 0  # nothing changed: nothing read
    path = root / "a" / "1" / "run.json"
    os.utime(path, ns=(1, 1))  # touched, same content: hashed, not read
    assert index.refresh() == 0
    data = json.loads(path.read_text(encoding="utf-8"))
    data["label"] = "renamed"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert index.refresh() == 1
    assert {r.key: r.label for r in index.runs()}["a/1"] == "renamed"
    # a second process opening the same index file sees the rows without reading anything
    assert RunIndex(str(root)).refresh() == 0


def test_vanished_and_unreadable_runs(root: Path) -> None:
    index = RunIndex(str(root))
    index.refresh()
    (root / "b" / "1" / "run.json").unlink()
    (root / "c" / "1").mkdir(parents=True)
    (root / "c" / "1" / "run.json").write_text("{not json", encoding="utf-8")
    index.refresh()
    rows = {r.key: r for r in index.runs()}
    assert "b/1" not in rows and not index.run("b/1")
    assert rows["c/1"].error and "c/1" in rows["c/1"].error and str(root) not in rows["c/1"].error
    assert index.path_of("c/1") is None  # listed as unreadable, never opened as a run


def test_nothing_outside_the_folder(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    shutil.copytree(root / "a" / "1", outside / "x")
    (root / "linked-dir").symlink_to(outside / "x", target_is_directory=True)
    (root / "linked-file").mkdir()
    (root / "linked-file" / "run.json").symlink_to(outside / "x" / "run.json")
    index = RunIndex(str(root))
    index.refresh()
    assert {r.key for r in index.runs()} == {"a/1", "b/1"}
    for key in ("linked-dir", "linked-file", "../outside/x", str(outside / "x"), "a/1/..", "a/../a/1"):
        assert index.path_of(key) is None, key
    assert index.path_of("a/1") == str(root / "a" / "1" / "run.json")


def test_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a folder of runs"):
        RunIndex(str(tmp_path / "missing"))
