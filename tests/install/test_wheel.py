"""A non-editable install carries the engine definitions: from an empty folder, with the suite
copied away from the checkout (so no ``engines/`` lies beside it), ``--engine NAME`` finds the
shipped definition and starts the server it names."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memeval.engines.conformance import CONTRACTS
from tests.install.conftest import ROOT, run

pytestmark = pytest.mark.slow


@pytest.fixture
def away(tmp_path: Path) -> tuple[Path, Path]:
    """(an empty working folder, the default suite copied to a folder with no engines/ near it)."""
    suite = tmp_path / "suite"
    shutil.copytree(ROOT / "specs" / "scenarios", suite / "scenarios")
    shutil.copy(ROOT / "specs" / "agent-memory.yaml", suite / "agent-memory.yaml")
    empty = tmp_path / "empty"
    empty.mkdir()
    return empty, suite / "agent-memory.yaml"


def _run(bin_: Path, cwd: Path, suite: Path, engine: str, *extra: str) -> dict[str, object]:
    out = cwd / f"run-{engine}"
    done = run([bin_ / "memeval", "run", suite, "--engine", engine, "--out", out, "--quiet", *extra], cwd)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    record: dict[str, object] = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert not any(s.get("status") == "errored" for s in record["scenarios"])  # type: ignore[attr-defined]
    return record


def test_reference_bm25_is_found_by_name(wheel_venv: Path, away: tuple[Path, Path]) -> None:
    empty, suite = away
    record = _run(wheel_venv, empty, suite, "reference-bm25")
    assert record["label"] == "reference-bm25"
    assert record["engine"]["settings"]["embedder"] == "none"  # type: ignore[index]  # the definition's, not the adapter's default


def test_fake_cortex_starts_the_server_its_definition_names(wheel_venv: Path, away: tuple[Path, Path]) -> None:
    empty, suite = away
    record = _run(wheel_venv, empty, suite, "fake-cortex")
    assert record["engine"]["name"] == "cortex"  # type: ignore[index]
    assert (empty / "run-fake-cortex" / "server.log").read_text(encoding="utf-8")


def test_mem0_starts_its_mock_inference_server(wheel_venv: Path, away: tuple[Path, Path]) -> None:
    pytest.importorskip("mem0")
    empty, suite = away
    record = _run(wheel_venv, empty, suite, "mem0", "--only", "brain_lookup")
    assert record["engine"]["name"] == "mem0"  # type: ignore[index]
    assert (empty / "run-mem0" / "server.log").read_text(encoding="utf-8")  # the mock inference server ran


def test_the_engine_skeleton_installs_and_passes_check_engine(wheel_venv: Path, tmp_path: Path) -> None:
    made = run([wheel_venv / "memeval", "new", "engine", "my-store"], tmp_path)
    assert made.returncode == 0, made.stderr
    installed = run([wheel_venv / "python", "-m", "pip", "install", "-q", "--no-deps", tmp_path / "memeval-my-store"],
                    tmp_path)
    assert installed.returncode == 0, installed.stderr[-3000:]
    checked = run([wheel_venv / "memeval", "check-engine", "my-store"], tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.splitlines()[-1] == f"{len(CONTRACTS)} passed, 0 failed, 0 skipped"
