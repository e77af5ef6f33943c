"""The public Python API: ``import memeval`` gives what a notebook or a pytest suite needs."""

from __future__ import annotations

import subprocess
import sys

import pytest

import memeval
from memeval.engines.reference.engine import create
from tests.conftest import FIXTURES, ROOT

MINI = f"{FIXTURES}/mini.yaml"


# The public surface, exactly: adding or removing a name is a decision, made here too.
PUBLIC = {
    "Adapter", "Answers", "BuildsBeliefs", "Capability", "Engine", "EngineError", "EngineInfo", "Erases",
    "HasBacklog", "Hit", "Inspects", "ListPage", "MemevalError", "MemoryItem", "ProbeResult",
    "RecallRequest", "ReportsConflicts", "ReportsUsage", "RunRecord", "ScenarioResult", "SpecError", "Suite",
    "UsageError", "WriteReceipt", "__version__", "capabilities_of", "compare", "load_suite", "publish",
    "read_run", "render_comparison", "run", "run_checks",
}


def test_the_public_surface_is_exactly_the_listed_names() -> None:
    assert set(memeval.__all__) == PUBLIC and len(memeval.__all__) == len(PUBLIC)


def test_run_and_compare_are_functions_even_after_their_packages_load() -> None:
    import memeval.comparison.table  # noqa: F401  (the packages behind them, loaded first)
    import memeval.runner.suite  # noqa: F401

    assert callable(memeval.run) and callable(memeval.compare)
    assert memeval.run.__module__ == memeval.compare.__module__ == "memeval.api"


def test_every_exported_name_resolves() -> None:
    for name in memeval.__all__:
        assert getattr(memeval, name) is not None, name
    with pytest.raises(AttributeError):
        memeval.no_such_thing  # noqa: B018


def test_run_by_engine_name_returns_a_typed_record_and_writes_nothing(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    record = memeval.run(MINI, engine="reference", label="api")
    assert isinstance(record, memeval.RunRecord) and record.label == "api" and record.engine.name == "reference"
    hits = next(k for k in record.kpis if k.name == "pack hit (synthesis)")
    assert hits.n and hits.value is not None
    assert list(tmp_path.iterdir()) == []  # no runs/ folder, no journal
    memeval.publish(record, str(tmp_path / "out"))
    assert memeval.read_run(str(tmp_path / "out" / "run.json")).to_json() == record.to_json()


def test_run_with_an_engine_object_leaves_it_open_for_the_caller() -> None:
    engine = create({"embedder": "none"})
    suite = memeval.load_suite(MINI)
    record = memeval.run(suite, engine=engine, only=["office"])
    assert [s.id for s in record.scenarios] == ["office"]
    assert engine.page("any-tenant").items == ()  # still usable: memeval did not close it
    engine.close()


def test_compare_takes_records_and_paths(tmp_path) -> None:
    first = memeval.run(MINI, label="a")
    memeval.publish(first, str(tmp_path / "a"))
    second = memeval.run(MINI, label="b")
    text = memeval.render_comparison(memeval.compare([str(tmp_path / "a" / "run.json"), second]))
    assert "b" in text and "pack hit (synthesis)" in text


@pytest.mark.parametrize("options", [{"settle_timeout_s": float("nan")}, {"settle_timeout_s": 0},
                                     {"enrich_wait_s": -1.0}, {"only": ["nope"]}, {"label": "a\nb"}])
def test_bad_options_are_usage_errors(options) -> None:
    with pytest.raises(memeval.UsageError):
        memeval.run(MINI, **options)


@pytest.mark.slow
def test_import_memeval_loads_no_engine_or_run_code() -> None:
    out = subprocess.run([sys.executable, "-c", "import sys, memeval; print(sorted(m for m in sys.modules "
                          "if m.startswith('memeval.')))"], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
