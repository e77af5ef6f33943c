"""Matrices for the sweep tests: tiny suite, fast fake CortexDB, few profiles."""

from __future__ import annotations

import os
import textwrap

import pytest

from tests.conftest import FIXTURES, ROOT

FAKE_ENGINE = os.path.join(ROOT, "engines", "fake-cortex.yaml")
MINI = os.path.join(FIXTURES, "mini.yaml")


def write_matrix(folder, body: str, name: str = "matrix.yaml") -> str:
    """Write a matrix file whose engine and suite are the fake CortexDB and the mini suite."""
    path = os.path.join(str(folder), name)
    head = f"engine: {FAKE_ENGINE}\nsuite: {MINI}\n"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(head + textwrap.dedent(body))
    return path


@pytest.fixture(autouse=True)
def _no_inherited_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    """Servers inherit this environment: no stray CortexDB flag may reach them."""
    for key in list(os.environ):
        if key.startswith(("CORTEX_", "FAKE_CORTEX_")):
            monkeypatch.delenv(key)
