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


def test_plan_names_each_threads_tenant_and_the_scheduled_belief_builds():
    suite = load_suite(os.path.join(ROOT, "tests", "language", "language.yaml"))
    exchanges = [s for s in plan_suite(suite)["two_cfos"] if s.kind == "exchange"]
    assert [(s.ref, s.tenant, s.index) for s in exchanges] == [("close", "north", 0), ("close", "north", 1),
                                                               ("close", "north", 2), ("close", "south", 0),
                                                               ("close", "south", 1)]
    assert all(s.note.endswith("+ belief build") for s in exchanges)  # every 2 turns: after each reply
    every_4 = suite.__class__(**{**suite.__dict__, "policy": suite.policy.__class__(build_beliefs_every=4)})
    notes = [s.note for s in plan_suite(every_4)["two_cfos"] if s.kind == "exchange"]
    assert ["+ belief build" in n for n in notes] == [False, True, False, False, True]
