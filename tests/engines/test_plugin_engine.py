"""A third-party engine package (tests/plugin_engine, its own pyproject and entry point) keeps
the engine contracts: installed into a fresh virtual environment beside a non-editable memeval,
it passes ``memeval check-engine`` and runs a suite; and its author's pytest run of the kit
(:mod:`memeval.engines.pytest_plugin`) passes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memeval.engines.conformance import CONTRACTS

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "tests" / "plugin_engine"


def run(argv: list[str | Path], cwd: Path, timeout: float = 300, **env: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in argv], cwd=cwd, text=True, capture_output=True, timeout=timeout,
                          env={**os.environ, **env}, check=False)
    return done


@pytest.mark.slow
def test_a_plugin_installed_in_a_fresh_venv_passes_the_kit_and_runs_a_suite(tmp_path: Path) -> None:
    # both packages are built from copies, so the build leaves nothing in the working tree
    skip = shutil.ignore_patterns("*.egg-info", "build", "__pycache__")
    plugin, source = tmp_path / "plugin", tmp_path / "memeval-source"
    shutil.copytree(PLUGIN, plugin, ignore=skip)
    shutil.copytree(ROOT / "memeval", source / "memeval", ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    venv = tmp_path / "venv"
    assert run([sys.executable, "-m", "venv", venv], tmp_path).returncode == 0
    pip = [venv / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    installed = run([*pip, source], tmp_path)
    assert installed.returncode == 0, installed.stderr[-2000:]
    installed = run([*pip, "--no-deps", plugin], tmp_path)
    assert installed.returncode == 0, installed.stderr[-2000:]

    checked = run([venv / "bin" / "memeval", "check-engine", "dict-memory"], tmp_path, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.splitlines()[-1] == f"{len(CONTRACTS)} passed, 0 failed, 0 skipped"

    ran = run([venv / "bin" / "memeval", "run", ROOT / "tests" / "fixtures" / "mini.yaml", "--engine", "dict-memory",
               "--out", tmp_path / "run", "--quiet"], tmp_path, timeout=120)
    assert ran.returncode in (0, 1), ran.stdout + ran.stderr
    record = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert record["engine"]["name"] == "dict-memory"
    assert record["engine"]["capabilities"] == ["erase", "forget"]
    assert record["scenarios"] and all(s.get("status") != "errored" for s in record["scenarios"])


@pytest.mark.slow
def test_the_plugins_author_runs_the_kit_as_pytest_tests(tmp_path: Path) -> None:
    done = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--confcutdir", PLUGIN,
                PLUGIN / "check_plugin.py"], tmp_path, timeout=120, PYTHONPATH=str(PLUGIN / "src"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(CONTRACTS)} passed" in done.stdout


NO_ERASE = '''
import pytest
from memeval.engines.pytest_plugin import EngineConformance
from memeval.engines.reference.engine import create


class NoErase:
    """The reference engine's core only: no erase, so the erase contract is skipped."""

    def __init__(self):
        self._inner = create({"embedder": "none"})
        for name in ("write", "page", "recall", "forget", "close"):
            setattr(self, name, getattr(self._inner, name))

    def info(self):
        from memeval.engines.base import EngineInfo, capabilities_of
        return EngineInfo("no-erase", "0", capabilities_of(self))


class TestNoErase(EngineConformance):
    @pytest.fixture
    def engine(self):
        return NoErase()


class TestClaimsTooMuch(EngineConformance):
    @pytest.fixture
    def engine(self):
        return Liar()


class Liar(NoErase):
    def info(self):
        from memeval.engines.base import Capability, EngineInfo
        return EngineInfo("liar", "0", frozenset({Capability.FORGET, Capability.USAGE}))
'''


@pytest.mark.slow
def test_the_pytest_plugin_skips_what_an_engine_lacks_and_fails_a_broken_contract(tmp_path: Path) -> None:
    (tmp_path / "test_kit.py").write_text(NO_ERASE, encoding="utf-8")
    done = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", tmp_path,
                tmp_path / "test_kit.py"], tmp_path, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"1 failed, {2 * len(CONTRACTS) - 3} passed, 2 skipped" in done.stdout
    assert "FAILED test_kit.py::TestClaimsTooMuch::test_contract[declared capabilities work, undeclared refused]" \
        in done.stdout
    assert "info declares ['usage'] it does not implement" in done.stdout
