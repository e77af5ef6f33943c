"""The keys issue 14 added to the YAML, run on the reference engine: kept probe questions, a
leak-only probe, a brief's heading, compaction over dropped user turns only, belief builds from
post_turn every N turns, and agent and thread ids scoped per tenant."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

from memeval.agent.lifecycle import Timings
from memeval.engines.reference.engine import create
from memeval.record import RunRecord
from memeval.runner.context import ScenarioContext
from memeval.runner.options import RunOptions
from memeval.runner.probes import ProbeRunner
from memeval.runner.suite import run_suite
from memeval.score.totals import totals
from memeval.spec.load import load_suite
from memeval.spec.model import Suite

SUITE = os.path.join(os.path.dirname(__file__), "language.yaml")


def _run(suite: Suite, engine=None, notes: list[str] | None = None) -> RunRecord:
    engine = engine or create({"embedder": "none"})
    return run_suite(suite, engine, RunOptions(label="t"), progress=(lambda e: notes.append(e.text)) if notes is not None else lambda _: None)


@pytest.fixture(scope="module")
def record() -> RunRecord:
    return _run(load_suite(SUITE))


def _probe(record: RunRecord, pid: str, phase: str = "recall"):
    return next(p for p in record.probes if p.id == pid and p.phase == phase)


def test_two_tenants_cfo_bots_never_see_each_other(record):
    north = ("Quistberg", "9023")
    south = ("Alvarsson", "4417", "Brennagh")
    for p in record.probes:
        pack = p.pack or ""
        assert p.status == "scored"
        foreign = south if p.id == "south-leaks" else north
        assert not any(s in pack for s in foreign), (p.id, p.phase)
    assert _probe(record, "north-auditor").hit is True
    assert set(record.scenarios[0].tenants) == {"north", "south"}


def test_a_leak_only_probe_sets_leak_fields_only_and_counts_in_no_hit_rate(record):
    leak = _probe(record, "south-leaks")
    assert (leak.status, leak.leak_checked, leak.leak, leak.leaked) == ("scored", True, False, ())
    assert (leak.hit, leak.rank, leak.rr, leak.answer_ok, leak.fresh_first) == (None, None, None, None, None)
    recall = totals(p for p in record.probes if p.phase == "recall")
    assert recall.pack_hit.n == 3 and recall.leaks.n == 2  # north-auditor's forbid and the leak-only probe


def test_a_leak_only_probe_reports_a_leak_when_the_pack_holds_a_forbidden_string():
    suite = load_suite(SUITE)
    scenario = suite.scenarios[0]
    # The same probe asked of north, whose memory holds the strings it forbids.
    probes = tuple(replace(p, tenant="north") if p.id == "south-leaks" else p for p in scenario.probes)
    record = _run(replace(suite, scenarios=(replace(scenario, probes=probes),)))
    leak = _probe(record, "south-leaks")
    assert leak.leak is True and leak.leaked and leak.hit is None
    assert totals(p for p in record.probes if p.phase == "recall").leaks.k == 1


def test_kept_probe_questions_stay_in_memory_and_take_history_slots(record):
    kept = _probe(record, "north-kept", "synthesis")
    assert "Who is the north auditor at closing?" in (kept.pack or "")
    read_only = _run(replace(load_suite(SUITE), agent=replace(load_suite(SUITE).agent, probe_questions="read_only")))
    assert "Who is the north auditor at closing?" not in (_probe(read_only, "north-kept", "synthesis").pack or "")


def test_kept_questions_are_forgotten_with_the_scenario():
    engine = create({"embedder": "none"})
    record = _run(load_suite(SUITE), engine)
    assert record.scenarios[0].cleanup.forgotten
    for ns in record.scenarios[0].tenants.values():
        assert engine.page(ns).items == ()


def test_a_brief_has_its_heading_apart_from_its_focus(record):
    pack = _probe(record, "north-brief").pack or ""
    assert "\n# North closing brief\n" in pack and "focus: closing the books" in pack
    assert "# Memory" not in pack


def test_compact_with_dropped_roles_user_drops_only_the_user_turns():
    suite = load_suite(SUITE)
    scenario = suite.scenarios[0]
    engine = create({"embedder": "none"})
    ctx = ScenarioContext(engine, frozenset(), scenario, {"north": "n", "south": "s"}, suite.defaults, suite.policy,
                          "read_only", 0.0, 0.2, Timings(), {("north", "close", i): f"reply {i}" for i in range(3)}, {})
    probe = next(p for p in scenario.probes if p.id == "north-compact")
    runner = ProbeRunner(ctx)
    user_only = runner._dropped(probe)
    assert [(d.turn, d.role) for d in user_only] == [(0, "user"), (2, "user")]
    assert user_only[1].text == "The north vault code is 4417."
    every = runner._dropped(replace(probe, dropped_roles="all"))
    assert [d.role for d in every] == ["user", "assistant", "user", "assistant"]


def test_beliefs_are_built_from_post_turn_every_n_turns():
    engine = create({"embedder": "none"})
    built: list[str] = []
    build = engine.build_beliefs

    def counting(tenant: str):
        built.append(tenant)
        return build(tenant)

    engine.build_beliefs = counting  # type: ignore[method-assign]
    suite = load_suite(SUITE)
    record = _run(suite, engine)
    ns = record.scenarios[0].tenants
    # every 2 turns: each reply (turns 1, 3, 5) ends a pair; north plays 3 exchanges, south 2,
    # then synthesis builds once per tenant.
    assert built.count(ns["north"]) == 3 + 1 and built.count(ns["south"]) == 2 + 1
    built.clear()
    _run(replace(suite, policy=replace(suite.policy, build_beliefs_every=None)), engine)
    assert len(built) == 2


def test_build_beliefs_every_is_reported_unsupported_where_the_engine_cannot_build():
    engine = create({"embedder": "none"})
    info = engine.info()
    engine.info = lambda: replace(info, capabilities=info.capabilities - {"beliefs"})  # type: ignore[method-assign]
    calls: list[str] = []
    engine.build_beliefs = lambda tenant: calls.append(tenant)  # type: ignore[method-assign,assignment,return-value]
    notes: list[str] = []
    _run(load_suite(SUITE), engine, notes)
    assert calls == []
    assert any("build_beliefs_every: unsupported" in n for n in notes)


def test_the_report_never_lists_a_leak_only_probe_as_a_miss(record):
    from memeval.report.view import build_view
    from memeval.score.derive import derive

    misses = build_view(derive(record))["misses"]
    assert "south-leaks" not in {m["id"] for m in misses}  # type: ignore[attr-defined,index]


def test_no_model_is_asked_about_a_leak_only_probe(record):
    from memeval.llm.answer import is_target

    assert not is_target(_probe(record, "south-leaks")) and is_target(_probe(record, "north-auditor"))
