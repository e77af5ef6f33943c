"""``memeval new``: each scaffold is valid as written, commented, and never written over a file;
the "Adding a scenario" walkthrough (docs/language.md) works in a folder of the user's own."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from memeval.engines.conformance import CONTRACTS, run_checks
from tests.conftest import cli


def _new(tmp_path: Path, *args: str) -> int | str | None:
    return cli(["new", *args, "--dir", str(tmp_path)])


def test_the_walkthrough_in_a_folder_of_ones_own(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _new(tmp_path, "suite", "mine") == 0
    assert cli(["new", "scenario", "parking", "--dir", str(tmp_path / "mine" / "scenarios")]) == 0
    suite = tmp_path / "mine" / "suite.yaml"
    capsys.readouterr()
    assert cli(["validate", "--strict", str(suite)]) == 0  # every expectation grounded, no warning
    out, err = capsys.readouterr()
    assert "2 scenarios, 6 probes" in out and err == ""
    assert cli(["run", str(suite), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    record = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert [s["id"] for s in record["scenarios"]] == ["first", "parking"]
    assert all(s["status"] == "ok" for s in record["scenarios"])


@pytest.mark.parametrize("kind, files", [("scenario", ["x.yaml"]), ("suite", ["x/suite.yaml", "x/scenarios/first.yaml"])])
def test_yaml_scaffolds_open_with_a_comment_and_validate(tmp_path: Path, kind: str, files: list[str]) -> None:
    assert _new(tmp_path, kind, "x") == 0
    for name in files:
        text = (tmp_path / name).read_text(encoding="utf-8")
        assert text.startswith("# x — ") or text.startswith("# first — "), text[:40]
        explained = [line for line in text.splitlines() if not line.startswith("#") and "  # " in line]
        assert "$schema=" in text and len(explained) >= 5  # commented where a key needs saying
        assert cli(["validate", "--strict", str(tmp_path / name)]) == 0


def test_nothing_is_written_over(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x.yaml").write_text("mine\n")
    (tmp_path / "memeval-x").mkdir()
    assert _new(tmp_path, "scenario", "x") == 2
    assert _new(tmp_path, "engine", "x") == 2
    assert (tmp_path / "x.yaml").read_text() == "mine\n" and list((tmp_path / "memeval-x").iterdir()) == []
    assert "exists; choose another name or --dir" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["../up", "a/b", "1st", "", "x" * 65, "a b"])
def test_a_name_must_be_an_id(tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _new(tmp_path, "scenario", name) == 2
    assert "a name starts with a letter" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_the_engine_skeleton_passes_the_kit_in_process(tmp_path: Path) -> None:
    assert _new(tmp_path, "engine", "my-store") == 0
    top = tmp_path / "memeval-my-store"
    pyproject = (top / "pyproject.toml").read_text(encoding="utf-8")
    assert 'my-store = "memeval_my_store:ADAPTER"' in pyproject and '"memeval-harness"' in pyproject
    spec = importlib.util.spec_from_file_location("memeval_my_store", top / "src" / "memeval_my_store" / "__init__.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["memeval_my_store"] = module
    try:
        spec.loader.exec_module(module)
        engine = module.create({})
        results = run_checks(engine, settle_s=1.0)
        engine.close()
    finally:
        del sys.modules["memeval_my_store"]
    assert [r.status for r in results] == ["pass"] * len(CONTRACTS), [r for r in results if not r.ok]
