"""Planning is pure and its text is golden."""

import os

from memeval.plan import plan_suite, render_plan
from memeval.spec.load import load_suite
from tests.conftest import FIXTURES, ROOT


def test_plan_of_the_fixture_is_golden(golden, monkeypatch):
    monkeypatch.chdir(ROOT)
    suite = load_suite(os.path.relpath(os.path.join(FIXTURES, "mini.yaml")))
    golden("plan-mini.txt", render_plan(suite, plan_suite(suite)))


def test_plan_is_pure_and_respects_only():
    suite = load_suite(os.path.join(FIXTURES, "mini.yaml"))
    assert plan_suite(suite) == plan_suite(suite)
    assert plan_suite(suite, ("nothing-matches",)) == {}
    steps = plan_suite(suite)["office"]
    kinds = [s.kind for s in steps]
    assert kinds[0] == "write_document" and kinds[-1] == "forget_all"
    assert kinds.index("settle") < kinds.index("forget_declared") < kinds.index("probe") < kinds.index("synthesise")
    synthesis_probes = [s.ref for s in steps if s.kind == "probe" and s.phase == "synthesis"]
    assert "forgot-vault" not in synthesis_probes  # declared phases: [recall]
