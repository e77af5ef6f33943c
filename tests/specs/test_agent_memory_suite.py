"""The agent-memory suite (specs/agent-memory.yaml): it validates, it is big and balanced enough
to measure something, every expectation is grounded in what the scenario writes, and it runs
end to end on the reference engine without being either trivially perfect or broken.

No exact accuracy is asserted: the numbers move as engines improve. Isolation (no leaks) and
forgetting (no residue) are asserted, because on the reference engine they are correctness
properties, not accuracy.
"""

from __future__ import annotations

import functools
import glob
import os
import re
from collections import Counter

import pytest

from memeval.agent.pack import Pack
from memeval.report.files import read_run
from memeval.score.match import contains
from memeval.stats.basic import rate
from memeval.spec.load import load_suite
from memeval.runner.script import scripted_reply
from memeval.spec.model import Scenario, Suite
from tests.conftest import ROOT, cli

SUITE = os.path.join(ROOT, "specs", "agent-memory.yaml")
SCENARIO_FILES = sorted(glob.glob(os.path.join(ROOT, "specs", "scenarios", "*.yaml")))
ENGINES = {name: os.path.join(ROOT, "engines", f"{name}.yaml") for name in ("reference", "reference-bm25")}
GROUPS = ("learning", "surprise", "conflicts", "freshness", "leaks", "abstention", "forgetting")
PURPOSES = {"brain_lookup", "restart_recall", "contradictions", "tool_heavy", "team_handoff", "compaction",
            "isolation", "needle_in_noise", "learnings", "learning_from_feedback", "surprise", "conflicts",
            "abstention", "forgetting"}
NOTHING_RECALLED = Pack(markdown="", tokens=0, refs=(), sections=())


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_suite(SUITE)


@functools.cache
def _reply_policy() -> str:
    return load_suite(SUITE).agent.reply


def _written(scenario: Scenario, tenant: str | None = None, skip: frozenset[str] = frozenset()) -> list[str]:
    """Every text the scenario writes to memory (optionally one tenant's, leaving out ids in
    ``skip``), as memory holds it: each reply as the scripted agent writes it (a tool result only
    when the reply carries it). A reply policy that echoes memory would also write recalled lines,
    which no static check can know; the empty pack leaves those out."""
    texts = []
    for doc in scenario.documents:
        if doc.id not in skip and tenant in (None, doc.tenant):
            texts.append(f"{doc.title}: {doc.text}")
    texts += [lrn.text for lrn in scenario.learnings if lrn.id not in skip and tenant in (None, lrn.tenant)]
    for thread in scenario.threads:
        if thread.id in skip or tenant not in (None, thread.tenant):
            continue
        for ex in thread.exchanges:
            texts.append(ex.user)
            texts.append(scripted_reply(ex, NOTHING_RECALLED, _reply_policy()))
    return texts


def _probes(suite: Suite):
    return [(s, p) for s in suite.scenarios for p in s.probes]


def test_suite_validates_and_plans():
    assert cli(["validate", SUITE]) == 0
    assert cli(["plan", SUITE]) == 0


def test_engine_definitions_validate():
    assert cli(["validate", *ENGINES.values()]) == 0


def test_scenarios_cover_every_purpose(suite: Suite):
    assert PURPOSES <= {s.id for s in suite.scenarios}
    assert len(SCENARIO_FILES) == len(suite.scenarios), "one file per scenario"


def test_size_and_balance(suite: Suite):
    probes = [p for _, p in _probes(suite)]
    for phase in ("recall", "synthesis"):
        scored = [p for p in probes if p.scored and phase in p.phases]
        assert len(scored) >= 80, f"{phase}: only {len(scored)} scored probes"
    scored = [p for p in probes if p.scored]
    share = sum(p.style == "paraphrase" for p in scored) / len(scored)
    assert share >= 0.30, f"only {share:.0%} paraphrase"
    groups = Counter(g for p in scored for g in p.groups)
    for group in GROUPS:
        assert groups[group] >= 6, f"group {group} has {groups[group]} probes"


def test_groups_feed_their_kpis(suite: Suite):
    """Each group's probes carry what its KPI reads: leaks need a forbid on a ranked probe,
    abstention and forgetting are abstentions, freshness needs stale values, conflicts both sides."""
    by_group: dict[str, list] = {g: [] for g in GROUPS}
    for scenario, probe in _probes(suite):
        for group in probe.groups:
            by_group[group].append((scenario, probe))
    assert all(p.forbid and not p.abstain for _, p in by_group["leaks"])
    assert all(p.abstain and p.forbid for _, p in by_group["abstention"] + by_group["forgetting"])
    assert all(p.stale for _, p in by_group["freshness"])
    assert all(len(p.expect) >= 2 for _, p in by_group["conflicts"])
    assert all(s.forget for s, _ in by_group["forgetting"])


def test_every_route_and_a_range_of_sources(suite: Suite):
    routes = Counter(p.route for _, p in _probes(suite))
    assert set(routes) == {"ask", "continue", "resume", "brief", "compact"}
    resumes = [p for _, p in _probes(suite) if p.route == "resume"]
    assert any(p.focus is None for p in resumes) and any(p.focus for p in resumes), "resume cold and with focus"
    compacts = [p for _, p in _probes(suite) if p.route == "compact"]
    assert any(p.focus is None for p in compacts) and any(p.focus for p in compacts)
    sources = {d.source for s in suite.scenarios for d in s.documents}
    assert {"notion", "github", "gmail", "slack", "pdf", "web"} <= sources
    assert sum(len(s.tenants) > 1 for s in suite.scenarios) >= 1
    assert any(len({t.day for t in s.threads}) >= 3 for s in suite.scenarios), "dated multi-session threads"
    assert any(not t.carried for s in suite.scenarios for th in s.threads for ex in th.exchanges for t in ex.tools)


def test_needle_hides_among_24_routine_threads(suite: Suite):
    needle = next(s for s in suite.scenarios if s.id == "needle_in_noise")
    assert len(needle.threads) >= 25


def test_contradictions_change_over_three_sessions(suite: Suite):
    scenario = next(s for s in suite.scenarios if s.id == "contradictions")
    stale = [p for p in scenario.probes if p.stale]
    assert stale and all(len(p.stale) >= 2 for p in stale), "two superseded values: three sessions"


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=os.path.basename)
def test_scenario_file_opens_with_a_comment(path: str):
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    assert lines and lines[0].startswith("#"), "the file must open with a comment saying what it tests"
    head = []
    for line in lines:
        if not line.startswith("#"):
            break
        head.append(line)
    prose = [line for line in head if "yaml-language-server" not in line and line.strip("# ")]
    assert prose, "the file must open with a comment saying what it tests (README: Adding a scenario)"


def test_probe_ids_are_unique_across_the_suite(suite: Suite):
    ids = Counter(p.id for _, p in _probes(suite))
    assert [i for i, n in ids.items() if n > 1] == []


def test_expectations_are_grounded(suite: Suite):
    """expect, accept and stale strings occur in what the scenario writes (and survives its
    forget); otherwise a probe could never pass, or its stale check would never fire."""
    for scenario, probe in _probes(suite):
        kept = _written(scenario, probe.tenant, frozenset(scenario.forget))
        for needle in probe.expect + probe.stale + tuple(s for alt in probe.accept for s in alt):
            assert any(contains(t, needle, probe.match) for t in kept), f"{probe.id}: {needle!r} is never written"


def test_stale_values_are_not_in_the_current_statement(suite: Suite):
    """The text holding the current value does not also hold a superseded one (else a correct
    answer quoting it would be graded stale)."""
    for scenario, probe in _probes(suite):
        if not probe.stale:
            continue
        holders = [t for t in _written(scenario, probe.tenant) if contains(t, probe.expect[0], probe.match)]
        assert any(not any(contains(t, s, probe.match) for s in probe.stale) for t in holders), probe.id


def test_forbidden_strings_are_real_and_unambiguous(suite: Suite):
    """A leak's forbidden strings exist only in other tenants; a forgetting probe's only in the
    forgotten items. Either way the check can fire, and only for the right reason."""
    for scenario, probe in _probes(suite):
        if "leaks" in probe.groups:
            own = _written(scenario, probe.tenant)
            others = [t for tenant in scenario.tenants if tenant != probe.tenant for t in _written(scenario, tenant)]
            for needle in probe.forbid:
                assert not any(contains(t, needle, probe.match) for t in own), f"{probe.id}: {needle!r} is its own tenant's"
                assert any(contains(t, needle, probe.match) for t in others), f"{probe.id}: {needle!r} is nowhere"
        if "forgetting" in probe.groups:
            kept = _written(scenario, skip=frozenset(scenario.forget))
            everything = _written(scenario)
            for needle in probe.forbid:
                assert any(contains(t, needle, probe.match) for t in everything), f"{probe.id}: {needle!r} never written"
                assert not any(contains(t, needle, probe.match) for t in kept), f"{probe.id}: {needle!r} survives forget"


def test_uncarried_tool_results_never_reach_memory(suite: Suite):
    """A result the reply does not carry appears in no written text, and a probe asks for it."""
    for scenario in suite.scenarios:
        hidden = [t.result for th in scenario.threads for ex in th.exchanges for t in ex.tools if not t.carried]
        for result in hidden:
            asked = [p for p in scenario.probes if p.abstain and any(contains(result, f, p.match) for f in p.forbid)]
            assert asked, f"{scenario.id}: nobody asks for {result!r}"
            for probe in asked:
                for needle in probe.forbid:
                    assert not any(contains(t, needle, probe.match) for t in _written(scenario)), needle


def test_numbers_match_as_people_write_them(suite: Suite):
    """Expected numbers of four digits or more match whether written 6500 or 6,500."""
    checked = 0
    for scenario, probe in _probes(suite):
        for needle in probe.expect:
            if not re.search(r"\d{4,}", needle) or probe.match != "word":
                continue
            grouped = re.sub(r"(?<![\w.])(\d{1,3})(\d{3})(?!\d)", r"\1,\2", needle)
            kept = _written(scenario, probe.tenant)
            assert any(contains(t, needle) for t in kept) and any(contains(t, grouped) for t in kept), needle
            checked += 1
    assert checked >= 3


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_runs_on_the_reference_engine(engine: str, tmp_path):
    out = tmp_path / engine
    assert cli(["run", SUITE, "--engine", ENGINES[engine], "--out", str(out), "--quiet"]) == 0
    record = read_run(str(out / "run.json")).to_json()
    assert PURPOSES <= {s["id"] for s in record["scenarios"]}
    assert all(s["status"] == "ok" for s in record["scenarios"])
    assert all(s["cleanup"]["forgotten"] for s in record["scenarios"]), "cleanup must forget every scenario"
    probes = record["probes"]
    assert [p["id"] for p in probes if p["status"] != "scored"] == []
    assert len([p for p in probes if p["phase"] == "recall"]) >= 80
    ranked = [p for p in probes if p["phase"] == "recall" and not p["abstain"]]
    hit = rate([p["hit"] for p in ranked])
    assert hit.n == len(ranked), "a ranked probe has no hit to count (a miss is False, not None)"
    assert hit.value is not None and 0.30 < hit.value < 1.0, f"pack hit {hit.text()}: trivially perfect or broken"
    assert not [p["id"] for p in probes if p["leak_checked"] and p["leak"]], "no pack may leak"
    residue = [p["id"] for p in probes if "forgetting" in p["groups"] and p["invented"]]
    assert residue == [], "forgotten facts came back"
