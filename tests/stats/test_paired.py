"""The paired clustered test: sign flips over clusters, exact or Monte Carlo, and its interval."""

from __future__ import annotations

import pytest

from memeval.stats.clustered import EXACT_CLUSTERS, paired_cluster_test


def test_three_clusters_all_gaining_one_probe_is_p_one_quarter_exactly():
    # Cluster sums (1, 1, 1): of the 8 sign flips only +++ and −−− reach |Σ| = 3.
    base = {"a1": 0.0, "b1": 0.0, "c1": 0.0, "c2": 1.0}
    other = {"a1": 1.0, "b1": 1.0, "c1": 1.0, "c2": 1.0}
    clusters = {"a1": "a", "b1": "b", "c1": "c", "c2": "c"}
    test = paired_cluster_test(base, other, clusters)
    assert (test.difference, test.p, test.pairs, test.clusters, test.method) == (0.75, 0.25, 4, 3, "exact")


def test_a_cluster_without_change_doubles_the_flips_that_reach_the_observed_sum():
    # Cluster sums (2, 2, 2, 1, 0): |Σ| = 7 only with all four non-zero sums positive or all
    # negative, and the zero cluster's sign is free: 4 of 32.
    base = {i: 0.0 for i in range(10)}
    other = {i: 1.0 if i < 7 else 0.0 for i in range(10)}
    test = paired_cluster_test(base, other, {i: i // 2 for i in range(10)})
    assert (test.difference, test.p, test.clusters) == (0.7, 0.125, 5)
    assert test.ci95 == (0.3, 1.0)


def test_no_difference_is_p_one():
    same = {i: float(i % 2) for i in range(20)}
    test = paired_cluster_test(same, dict(same), {i: i % 4 for i in range(20)})
    assert (test.difference, test.p) == (0.0, 1.0)
    assert test.ci95 == (0.0, 0.0)


def test_only_probes_both_runs_scored_are_paired():
    base = {"x": 0.0, "y": 1.0, "only-base": 1.0}
    other = {"x": 1.0, "y": 1.0, "only-other": 0.0}
    test = paired_cluster_test(base, other, {"x": "a", "y": "b"})
    assert (test.pairs, test.difference, test.clusters) == (2, 0.5, 2)
    with pytest.raises(KeyError):
        paired_cluster_test(base, other, {"x": "a"})


def test_no_pairs_gives_no_difference_and_no_p_value():
    test = paired_cluster_test({"a": 1.0}, {"b": 1.0}, {})
    assert (test.difference, test.ci95, test.p, test.pairs) == (None, None, None, 0)
    assert test.reason == "no probes scored by both runs"


def test_one_cluster_can_never_be_significant_and_has_no_interval():
    base = {i: 0.0 for i in range(30)}
    other = {i: 1.0 for i in range(30)}
    test = paired_cluster_test(base, other, {i: "one" for i in range(30)})
    assert (test.difference, test.p, test.ci95) == (1.0, 1.0, None)
    assert test.reason == "one cluster: a cluster interval needs at least two"


def test_many_clusters_use_seeded_monte_carlo_and_are_deterministic():
    k = EXACT_CLUSTERS + 3
    base = {i: 0.0 for i in range(4 * k)}
    other = {i: 1.0 if i % 4 else 0.0 for i in range(4 * k)}
    clusters = {i: i // 4 for i in range(4 * k)}
    test = paired_cluster_test(base, other, clusters, resamples=999, seed=5)
    assert (test.method, test.clusters, test.resamples, test.seed) == ("monte-carlo", k, 999, 5)
    # Every cluster gained 3: only the all-+ and all-− flips (2 of 32,768) reach |Σ|, so the
    # Monte Carlo p is (0 + 1) / (999 + 1) unless a draw hit one of them.
    assert test.p == pytest.approx(0.001)
    assert paired_cluster_test(base, other, clusters, resamples=999, seed=5) == test


def test_monte_carlo_finds_no_effect_where_gains_and_losses_balance():
    # 13 clusters, each with as many gains as losses (give or take one): no cluster moves.
    base = {i: float(i % 3 == 0) for i in range(130)}
    other = {i: float(i % 3 == 1) for i in range(130)}
    clusters = {i: i % 13 for i in range(130)}
    test = paired_cluster_test(base, other, clusters)
    assert test.method == "monte-carlo" and test.p > 0.5
