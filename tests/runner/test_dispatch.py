"""Steps and probe routes are dispatched by exhaustive matches: an unknown one is an error, never
a silent fall-through (a route that is not compaction must never be run as one)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memeval.agent.lifecycle import Timings
from memeval.engines.reference.engine import create
from memeval.plan import Step
from memeval.runner.options import RunOptions
from memeval.runner.scenario import ScenarioRun
from memeval.spec.load import load_suite
from tests.conftest import FIXTURES


@pytest.fixture
def scenario_run() -> ScenarioRun:
    suite = load_suite(f"{FIXTURES}/mini.yaml")
    engine = create({"embedder": "none"})
    return ScenarioRun(suite, suite.scenarios[0], engine, frozenset(engine.info().capabilities), "t", RunOptions(),
                       Timings())


def test_an_unknown_route_raises_instead_of_compacting(scenario_run: ScenarioRun) -> None:
    probe = scenario_run.scenario.probes[0]
    scenario_run.runner.by_id[probe.id] = replace(probe, route="summarise")
    with pytest.raises(AssertionError):
        scenario_run.runner.run(Step("probe", scenario_run.scenario.id, ref=probe.id, phase="recall"), True, None)
    assert "probe compact" not in scenario_run.timings.samples


def test_an_unknown_step_kind_raises(scenario_run: ScenarioRun) -> None:
    with pytest.raises(AssertionError):
        scenario_run._step(Step("teleport", scenario_run.scenario.id))  # type: ignore[arg-type]
