"""Cluster intervals wired into the KPIs and the reports, and compare's clustered paired test."""

from __future__ import annotations

from memeval.comparison import compare_records
from memeval.report.render import render
from tests.comparison.factory import probe, run


def scenarios(hit: dict[str, int], size: int = 5):
    """``size`` probes in each scenario of ``hit``, the first ``hit[s]`` of them hits."""
    return [probe(f"p{i}", i < k, s) for s, k in hit.items() for i in range(size)]


def test_a_rate_kpi_has_a_cluster_interval_beside_wilson_with_its_cluster_count():
    record = run(scenarios({f"conv-{i}": k for i, k in enumerate([5, 5, 0, 5, 1, 5, 0, 4])}))
    hit = next(k for k in record.kpis if k.name == "pack hit (synthesis)")
    assert hit.clustered is not None and hit.clustered.clusters == 8 and hit.clustered.unit == "scenario"
    assert hit.ci95 and hit.clustered.ci95
    assert hit.clustered.ci95[1] - hit.clustered.ci95[0] > hit.ci95[1] - hit.ci95[0]  # whole haystacks fail together
    assert run(scenarios({f"conv-{i}": k for i, k in enumerate([5, 5, 0, 5, 1, 5, 0, 4])})).kpis == record.kpis
    text = render(record, "run.md.j2")
    assert "95% CI (Wilson) | 95% CI (cluster bootstrap)" in text and "(8 scenarios) |" in text


def test_one_scenario_gives_no_cluster_interval_and_says_so():
    hit = next(k for k in run(scenarios({"only": 3})).kpis if k.name == "pack hit (synthesis)")
    assert hit.clustered is not None and hit.clustered.ci95 is None and "one cluster" in (hit.clustered.reason or "")


def test_compare_uses_the_clustered_test_when_the_gain_sits_in_one_scenario():
    names = [f"conv-{i}" for i in range(8)]
    base = run(scenarios(dict.fromkeys(names, 0), 8), profile="baseline")
    one = run(scenarios({n: 8 if n == "conv-0" else 0 for n in names}, 8), profile="one-haystack")
    spread = run(scenarios(dict.fromkeys(names, 1), 8), profile="everywhere")
    comparison = compare_records([base, one, spread])
    cells = {c["profile"]: c for k in comparison["kpis"] if k["name"] == "pack hit (synthesis)" for c in k["cells"]}
    assert cells["one-haystack"]["test"] == "cluster sign-flip" and cells["one-haystack"]["clusters"] == 8
    assert cells["one-haystack"]["p"] == 1.0 and cells["one-haystack"]["mark"] == "~"  # McNemar would say 0.008
    assert cells["everywhere"]["p"] < 0.05 and cells["everywhere"]["mark"] == "▲"
