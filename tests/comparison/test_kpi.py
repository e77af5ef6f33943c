"""KPIs: the seed's pinned cases, and null (never 0) for what a run cannot measure."""

from __future__ import annotations

from memeval.spec.engine_def import resolve_engine
from memeval.runner.options import RunOptions
from memeval.runner.suite import run_suite
from memeval.score.kpi import GROUPS
from memeval.spec.load import load_suite
from memeval.record import Usage
from tests.comparison.factory import answerer, probe, run, scenario, value
from tests.conftest import FIXTURES


def test_synthesis_gain_is_100_points_when_recall_misses_and_synthesis_hits():
    record = run([probe("p", False, phase="recall"), probe("p", True, phase="synthesis")])
    assert value(record, "pack hit (recall)") == 0.0
    assert value(record, "pack hit (synthesis)") == 100.0
    assert value(record, "synthesis gain") == 100.0


def test_planted_conflict_flagged_and_spurious_conflicts_outside_conflict_scenarios():
    probes = [
        probe("refund-policy", scenario="conflicts", groups=("conflicts",), expect=("refund",)),
        probe("current-plan", scenario="contradictions", groups=("freshness",)),
        probe("docs", scenario="brain_lookup"),
    ]
    scenarios = [
        scenario("conflicts", ["value open: policy refund window [14 days | 30 days]"]),
        scenario("contradictions", ["value open: plan tier [pro | team]"]),
        scenario("brain_lookup", ["value open: office city [Oslo | Bergen]"]),
    ]
    record = run(probes, scenarios=scenarios)
    assert value(record, "planted conflicts flagged") == 100.0
    assert value(record, "spurious conflicts") == 1
    assert value(record, "conflicts raised") == 3


def test_a_planted_word_missing_from_the_conflicts_is_not_flagged():
    probes = [probe("refund-policy", scenario="conflicts", groups=("conflicts",), expect=("refund",))]
    record = run(probes, scenarios=[scenario("conflicts", ["value open: office city [Oslo | Bergen]"])])
    assert value(record, "planted conflicts flagged") == 0.0
    assert value(record, "spurious conflicts") is None


def test_cost_per_correct_answer_is_engine_plus_answerer_over_correct():
    probes = [probe("a", True, llm_ok=True), probe("b", True, llm_ok=False)]
    record = run(probes, usage=Usage(calls=10, tokens=900, cost_usd=2.0, by_role={"enrichment": 1.5}),
                 answers=answerer(2, 300, 1.0))
    assert value(record, "per correct answer") == 3.0
    assert value(record, "engine $: enrichment") == 1.5
    assert value(record, "engine model calls") == 10


def test_rates_and_means_carry_n_and_an_interval():
    record = run([probe("a", True), probe("b", False)])
    hit = next(k for k in record.kpis if k.name == "pack hit (synthesis)")
    mrr = next(k for k in record.kpis if k.name == "MRR")
    assert hit.ci95 is not None
    assert (hit.unit, hit.better, hit.n) == ("pct", "up", 2) and hit.ci95[0] < 50 < hit.ci95[1]
    assert (mrr.unit, mrr.n, mrr.value) == ("score", 2, 0.5) and mrr.ci95 is not None


def test_percentiles_need_enough_samples():
    record = run([probe("a")], timings={"pre_turn (log + recall)": [float(i) for i in range(1, 20)]})
    assert value(record, "pre_turn p50") == 10.0
    assert value(record, "pre_turn p95") is None
    record = run([probe("a")], timings={"pre_turn (log + recall)": [float(i) for i in range(1, 21)]})
    assert value(record, "pre_turn p95") == 19.0


def test_engine_only_kpis_are_null_on_the_reference_engine():
    suite = load_suite(f"{FIXTURES}/mini.yaml")
    engine = resolve_engine("reference").create()
    record = run_suite(suite, engine, RunOptions())
    kpis = {k.name: k for k in record.kpis}
    for name in ("engine models $", "engine model calls", "engine model tokens", "per correct answer",
                 "enrichment drain", "answerer $", "model answer", "lesson answered"):
        assert kpis[name].value is None, name
    assert kpis["pack hit (synthesis)"].value is not None
    # every group is one block, and the blocks come in the order GROUPS gives (as reports show them)
    groups = [k.group for k in record.kpis]
    blocks = [g for i, g in enumerate(groups) if i == 0 or groups[i - 1] != g]
    assert blocks == list(GROUPS)


def test_a_kpi_counted_in_both_phases_names_its_phase_on_each_side():
    # A "pack hit (recall)" beside a bare "pack hit" read as if the bare one were both phases.
    from memeval.score.kpi import PROBE_METRICS

    names = {m.name: m for m in PROBE_METRICS}
    phased = [n for n in names if n.endswith(" (recall)")]
    assert phased
    for name in phased:
        base = name.removesuffix(" (recall)")
        assert base not in names
        assert names[f"{base} (synthesis)"].phases == ("synthesis",) and names[name].phases == ("recall",)
