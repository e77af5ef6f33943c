"""The cluster unit a suite declares (``cluster:``), or its benchmark's natural one by default:
the intervals resample it, run.json names it with the number of clusters, and the report shows
it beside the interval."""

from __future__ import annotations

import json

import pytest

from memeval.record import ProbeResult
from memeval.report.files import read_run
from memeval.score.clusters import Clustering, clustering
from memeval.util.suggest import counted
from tests.conftest import cli
from tests.datasets.files import locomo_records, write


@pytest.mark.parametrize("resolved, unit", [
    ({}, "scenario"),
    ({"dataset": {"format": "locomo"}}, "conversation"),
    ({"x-dataset": {"format": "longmemeval"}}, "haystack"),
    ({"dataset": {"format": "locomo"}, "cluster": "category"}, "category"),
    ({"cluster": "probe"}, "probe"),
])
def test_the_unit_is_the_declared_one_else_the_benchmarks(resolved, unit):
    assert clustering(resolved).unit == unit


def test_units_group_probes_and_are_counted_in_words(mini_probe: ProbeResult):
    other = mini_probe.__class__(**{**mini_probe.__dict__, "id": "other", "category": None})
    assert Clustering("scenario").of(mini_probe) == Clustering("conversation").of(other) == mini_probe.scenario
    assert Clustering("probe").of(mini_probe) != Clustering("probe").of(other)
    assert Clustering("category").of(other) == "(none)"
    assert (counted(1, "conversation"), counted(10, "conversation"), counted(3, "category")) == \
        ("1 conversation", "10 conversations", "3 categories")


@pytest.fixture
def mini_probe() -> ProbeResult:
    from tests.conftest import FIXTURES

    return read_run(f"{FIXTURES}/records/mini-reference.json").probes[0]


def _locomo(tmp_path, extra=""):
    write(tmp_path / "locomo10.json", locomo_records())
    suite = tmp_path / "bench.yaml"
    suite.write_text(f"suite: lc\nabout: clusters\n{extra}dataset:\n  format: locomo\n  path: locomo10.json\n")
    return suite


@pytest.mark.parametrize("extra, unit, clusters, shown", [
    ("", "conversation", 2, "(2 conversations) |"),
    ("cluster: category\n", "category", 4, "(4 categories) |"),  # pack hit counts no adversarial (abstention) probe
])
def test_a_locomo_run_resamples_its_declared_unit(tmp_path, extra, unit, clusters, shown):
    suite = _locomo(tmp_path, extra)
    assert cli(["run", str(suite), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    hit = next(k for k in record["kpis"] if k["name"] == "pack hit (synthesis)")
    assert (hit["clustered"]["unit"], hit["clustered"]["clusters"]) == (unit, clusters)
    assert shown in (tmp_path / "run" / "run.md").read_text()


def test_an_unknown_unit_is_a_spec_error(tmp_path, capsys):
    suite = _locomo(tmp_path, "cluster: speaker\n")
    assert cli(["validate", str(suite)]) == 2
    assert f"{suite}:3:10  cluster:" in capsys.readouterr().err
