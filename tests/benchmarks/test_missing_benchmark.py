"""A record whose benchmark is not installed where it is read (a plugin's run opened elsewhere)
still reads and renders: the report says the tables cannot be shown instead of guessing, the
cluster unit falls back to scenarios and the setup records no abstention policy, and the
installed benchmark's record keeps all three."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memeval.record import RunRecord
from memeval.report.benchmark import benchmark_view
from memeval.report.files import read_run
from memeval.report.render import render
from memeval.score.clusters import clustering
from memeval.score.setup import scoring_setup
from tests.conftest import cli
from tests.datasets.files import locomo_records, write


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> RunRecord:
    tmp = tmp_path_factory.mktemp("missing")
    write(tmp / "locomo10.json", locomo_records())
    (tmp / "bench.yaml").write_text("suite: lc\nabout: x\ndataset:\n  format: locomo\n  path: locomo10.json\n")
    assert cli(["run", str(tmp / "bench.yaml"), "--out", str(tmp / "out"), "--quiet"]) == 0
    return read_run(str(tmp / "out" / "run.json"))


def _elsewhere(record: RunRecord) -> RunRecord:
    """The same record as if a benchmark called ``gone`` had written it."""
    assert record.benchmark is not None
    dataset = {**record.suite.resolved["dataset"], "format": "gone"}
    suite = replace(record.suite, resolved={**record.suite.resolved, "dataset": dataset})
    return replace(record, benchmark=replace(record.benchmark, format="gone"), suite=suite)


def test_the_installed_benchmark_gives_its_tables_unit_and_policy(record: RunRecord) -> None:
    view = benchmark_view(record)
    assert view is not None and view.title == "LoCoMo" and view.tables
    assert clustering(record.suite.resolved).unit == "conversation"
    dataset = scoring_setup(record).dataset
    assert dataset is not None and dataset.abstention is not None


def test_a_benchmark_not_installed_here_is_said_not_guessed(record: RunRecord) -> None:
    gone = _elsewhere(record)
    view = benchmark_view(gone)
    assert view is not None and view.tables == () and view.title == "gone"
    assert "The benchmark 'gone' is not installed here: its tables cannot be shown." in view.notes
    assert clustering(gone.suite.resolved).unit == "scenario"
    dataset = scoring_setup(gone).dataset
    assert dataset is not None and dataset.abstention is None
    assert "not installed here" in render(gone, "run.md.j2") and "not installed here" in render(gone, "run.html.j2")
