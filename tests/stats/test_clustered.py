"""Cluster bootstrap intervals for rates and means: worked examples, edge cases, goldens."""

from __future__ import annotations

import random

import numpy as np
import pytest

from memeval.stats.clustered import SEED, cluster_mean, cluster_rate
from memeval.stats.basic import mean_ci, wilson


def _data() -> tuple[list[str], list[bool], list[float]]:
    """300 probes in 12 clusters of uneven size, each cluster with its own pass chance."""
    r = random.Random(13)
    clusters = [f"c{min(int(r.expovariate(0.3)), 11)}" for _ in range(300)]
    chance = {c: r.random() for c in sorted(set(clusters))}
    outcomes = [r.random() < chance[c] for c in clusters]
    values = [round(r.random() * chance[c], 3) for c in clusters]
    return clusters, outcomes, values


def test_no_data_gives_no_value_and_no_interval_never_zero():
    est = cluster_rate([], [])
    assert (est.value, est.n, est.clusters, est.naive, est.bootstrap) == (None, 0, 0, None, None)
    assert est.reason == "no data"


def test_unscored_outcomes_are_left_out_with_their_clusters():
    est = cluster_rate([None, None], ["a", "b"])
    assert (est.value, est.n, est.clusters, est.bootstrap) == (None, 0, 0, None)
    est = cluster_rate([True, None, False], ["a", "b", "a"])
    assert (est.value, est.n, est.clusters) == (0.5, 2, 1)


def test_one_cluster_has_a_wilson_interval_but_no_cluster_interval_and_says_why():
    est = cluster_rate([True, False, True], ["only"] * 3)
    assert est.naive == wilson(2, 3)
    assert est.bootstrap is None
    assert est.reason == "one cluster: a cluster interval needs at least two"


def test_two_opposite_clusters_span_everything_between_all_fail_and_all_pass():
    # Resamples: {a, a} → 1, {a, b} or {b, a} → 0.25, {b, b} → 0: the 2.5% and 97.5%
    # percentiles of 2,000 draws are 0 and 1 whatever the seed.
    est = cluster_rate([True, False, False, False], ["a", "b", "b", "b"], seed=3)
    assert est.value == 0.25 and est.clusters == 2
    assert est.bootstrap == (0.0, 1.0)


def test_clusters_that_all_pass_give_a_point_interval():
    est = cluster_rate([True] * 6, ["a", "a", "b", "c", "c", "c"])
    assert est.bootstrap == (1.0, 1.0) and est.value == 1.0


def test_homogeneous_clusters_widen_the_interval_far_beyond_wilson():
    outcomes = [c % 2 == 0 for c in range(10) for _ in range(20)]
    clusters = [c for c in range(10) for _ in range(20)]
    est = cluster_rate(outcomes, clusters)
    lo, hi = est.bootstrap
    wlo, whi = est.naive
    assert hi - lo > 3 * (whi - wlo)


def test_one_probe_per_cluster_gives_about_the_wilson_interval():
    outcomes = [i % 10 < 3 for i in range(400)]
    est = cluster_rate(outcomes, list(range(400)))
    assert est.bootstrap[0] == pytest.approx(est.naive[0], abs=0.02)
    assert est.bootstrap[1] == pytest.approx(est.naive[1], abs=0.02)


def test_golden_rate_interval_to_the_digit_and_the_seed_matters():
    clusters, outcomes, _ = _data()
    est = cluster_rate(outcomes, clusters)
    assert (est.value, est.n, est.clusters) == (pytest.approx(197 / 300), 300, 12)
    assert est.naive == (0.6013, 0.7081)
    assert est.bootstrap == (0.457, 0.8038)
    assert (est.seed, est.resamples, est.reason) == (SEED, 2000, None)
    assert cluster_rate(outcomes, clusters) == est
    assert cluster_rate(outcomes, clusters, seed=1).bootstrap == (0.4534, 0.7981)


def test_the_interval_does_not_depend_on_the_order_probes_come_in():
    clusters, outcomes, _ = _data()
    order = list(range(300))
    random.Random(4).shuffle(order)
    shuffled = cluster_rate([outcomes[i] for i in order], [clusters[i] for i in order])
    assert shuffled.bootstrap == cluster_rate(outcomes, clusters).bootstrap


def test_vectorised_bootstrap_matches_a_plain_loop_over_the_same_draws():
    clusters, outcomes, _ = _data()
    labels = sorted(set(clusters), key=repr)
    picks = np.random.default_rng(11).integers(0, len(labels), size=(300, len(labels)))
    stats = []
    for row in picks:
        chosen = [labels[i] for i in row]
        k = sum(sum(o for o, c in zip(outcomes, clusters) if c == label) for label in chosen)
        n = sum(sum(1 for c in clusters if c == label) for label in chosen)
        stats.append(k / n)
    lo, hi = np.quantile(stats, (0.025, 0.975))
    assert cluster_rate(outcomes, clusters, seed=11, resamples=300).bootstrap == (round(lo, 4), round(hi, 4))


def test_golden_mean_interval_beside_the_normal_one():
    clusters, _, values = _data()
    est = cluster_mean(values, clusters, bounds=(0.0, 1.0))
    mean, naive = mean_ci(values, (0.0, 1.0))
    assert est.value == pytest.approx(mean)
    assert est.naive == (round(naive[0], 4), round(naive[1], 4)) == (0.2954, 0.349)
    assert est.bootstrap == (0.2087, 0.4142)


def test_mean_of_one_value_has_no_normal_interval():
    est = cluster_mean([0.5, None], ["a", "b"])
    assert (est.value, est.naive, est.bootstrap, est.clusters) == (0.5, None, None, 1)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="2 outcomes but 1 cluster"):
        cluster_rate([True, False], ["a"])
    with pytest.raises(ValueError, match="resamples"):
        cluster_rate([True], ["a"], resamples=0)
