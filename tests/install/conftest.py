"""A memeval installed as a user installs it: a wheel built from a copy of the checkout, in a
virtual environment of its own (the base interpreter's site-packages lend the dependencies, so
nothing is downloaded), used from folders outside the checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What a wheel is built from: the package, its build files and the engine definitions it carries.
SOURCES = ("memeval", "engines", "pyproject.toml", "setup.py", "MANIFEST.in", "README.md")


def run(argv: Sequence[str | Path], cwd: Path, timeout: float = 600, **env: str) -> subprocess.CompletedProcess[str]:
    """A process with the test's environment plus ``env``; never raises on its exit code."""
    return subprocess.run([str(a) for a in argv], cwd=cwd, text=True, capture_output=True, timeout=timeout,
                          env={**os.environ, **env}, check=False)


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding memeval as a wheel (``pip install --no-deps`` of a copy of the checkout);
    returns its ``bin`` folder."""
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    skip = shutil.ignore_patterns("*.egg-info", "build", "__pycache__", "shipped_engines")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=skip)
        else:
            shutil.copy(ROOT / name, source / name)
    venv = base / "venv"
    interpreter = getattr(sys, "_base_executable", sys.executable)
    made = run([interpreter, "-m", "venv", "--system-site-packages", venv], base)
    assert made.returncode == 0, made.stderr
    installed = run([venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", source], base)
    assert installed.returncode == 0, installed.stderr[-3000:]
    where = run([venv / "bin" / "python", "-c", "import memeval; print(memeval.__file__)"], base)
    assert where.stdout.startswith(str(venv)), where.stdout + where.stderr  # the wheel, not the checkout
    return venv / "bin"
