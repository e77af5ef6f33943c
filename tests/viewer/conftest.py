"""A runs folder for the viewer's tests, made by really running memeval: two runs of one label
(a trend, a comparison of one label with itself), one on another engine (a comparison with
flips, a second leaderboard row), one of another scenario set (a refused comparison) and one
whose scenario plants markup in its pack text."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from memeval.viewer.server import running as serving
from tests.conftest import ROOT, cli
from tests.report.browser import hostile_suite

AGENT = os.path.join(ROOT, "specs", "agent-memory.yaml")
BM25 = os.path.join(ROOT, "engines", "reference-bm25.yaml")
SCENARIOS = "brain_lookup,contradictions,abstention"


@dataclass(frozen=True)
class Runs:
    """The folder and the keys of its runs."""

    root: str
    alpha: tuple[str, str]
    bm25: str
    other: str
    hostile: str


def _run(suite: str, root: Path, key: str, *extra: str) -> str:
    assert cli(["run", suite, "--out", str(root / key), "--quiet", *extra]) == 0
    return key


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    root = tmp_path_factory.mktemp("runs")
    specs = tmp_path_factory.mktemp("specs")
    only = ("--only", SCENARIOS)
    alpha = (_run(AGENT, root, "alpha/r1", *only, "--label", "alpha"),
             _run(AGENT, root, "alpha/r2", *only, "--label", "alpha"))
    bm25 = _run(AGENT, root, "bm25/r1", *only, "--label", "bm25", "--engine", BM25)
    other = _run(AGENT, root, "other/r1", "--only", "brain_lookup", "--label", "other")
    hostile = _run(str(hostile_suite(specs)), root, "hostile/r1", "--label", "hostile")
    return Runs(str(root), alpha, bm25, other, hostile)
