"""Power planning: the ICC estimate, variance components, sizes needed and the minimum
detectable change, checked against hand-computed values and against the contract."""

from __future__ import annotations

import math
import random
from statistics import NormalDist

import pytest

from memeval.score.power import ProbeOutcome, icc, measure, plan

Z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)  # 2.8016


def _run(verdicts: dict[str, list[bool | None]]) -> list[ProbeOutcome]:
    return [ProbeOutcome(scenario, f"p{i}", "recall", v) for scenario, vs in verdicts.items() for i, v in enumerate(vs)]


TWO_CLUSTERS = _run({"a": [True, True, True, False], "b": [False, False, False, True]})


def test_icc_on_worked_examples():
    # Means 0.75 and 0.25: MSB = 4·0.0625·2 / 1 = 0.5, MSW = 1.5 / 6 = 0.25, m₀ = 4:
    # ρ = (0.5 − 0.25) / (0.5 + 3·0.25) = 0.2.
    assert icc([1, 1, 1, 0, 0, 0, 0, 1], list("aaaabbbb")) == pytest.approx(0.2)
    assert icc([1, 1, 0, 0], list("aabb")) == 1.0
    assert icc([1, 0, 1, 0], list("aabb")) == 0.0  # negative estimate, clipped


def test_icc_is_none_when_it_cannot_be_estimated():
    assert icc([1, 0, 1], list("aaa")) is None  # one cluster
    assert icc([1, 0, 1], list("abc")) is None  # no within-cluster degrees of freedom
    assert icc([1, 1, 1, 1], list("aabb")) is None  # no variance at all


def test_one_run_measured_and_planned_by_hand():
    variance = measure([TWO_CLUSTERS])
    assert (variance.probes, variance.clusters, variance.repeats, variance.dropped) == (8, 2, 1, 0)
    assert variance.rate == 0.5 and variance.within is None
    assert variance.sd == pytest.approx(math.sqrt(2 / 7))
    assert variance.design_effect == pytest.approx(1.6)  # 1 + (4 − 1)·0.2
    p = plan(variance, 10)
    # V = 2/7 · 1.6; n = z²·2V / 0.1² = 717.6 → 718 probes, 180 clusters of 4;
    # MDE = z·√(2V / 8) = 94.71 pp.
    assert (p.probes_needed, p.clusters_needed, p.mde_pp) == (718, 180, 94.71)
    assert p.repeats_needed is None and "two or more runs" in p.repeats_reason


def _repeated(seed: int, probes: int = 400, clusters: int = 20, runs: int = 3) -> list[list[ProbeOutcome]]:
    """Runs of one suite where each probe passes with its own chance, clusters share some."""
    r = random.Random(seed)
    shift = {c: r.uniform(-0.15, 0.15) for c in range(clusters)}
    chance = [min(1.0, max(0.0, r.random() * 0.4 + 0.5 + shift[i % clusters])) for i in range(probes)]
    return [[ProbeOutcome(f"s{i % clusters}", f"p{i}", "recall", r.random() < chance[i]) for i in range(probes)]
            for _ in range(runs)]


def test_sizes_needed_are_the_smallest_that_reach_the_change():
    variance = measure(_repeated(1))
    assert variance.repeats == 3 and variance.within > 0
    p = plan(variance, 8)
    v = variance.sd ** 2 * variance.design_effect
    reaches = lambda n: Z * math.sqrt(2 * v / n) <= 0.08  # noqa: E731
    assert reaches(p.probes_needed) and not reaches(p.probes_needed - 1)
    assert p.clusters_needed == math.ceil(p.probes_needed / 20)
    assert p.mde_pp == pytest.approx(100 * Z * math.sqrt(2 * v / 400), abs=0.01)


def test_repeats_needed_shrink_repeat_noise_until_the_change_fits():
    variance = measure(_repeated(2))
    p = plan(variance, 9)
    s2, r = variance.sd ** 2, variance.repeats
    fixed = max(0.0, s2 - variance.within / r) + s2 * (variance.design_effect - 1)
    per_probe = lambda repeats: fixed + variance.within / repeats  # noqa: E731
    assert p.repeats_needed is not None
    assert Z * math.sqrt(2 * per_probe(p.repeats_needed) / 400) <= 0.09
    assert p.repeats_needed == 1 or Z * math.sqrt(2 * per_probe(p.repeats_needed - 1) / 400) > 0.09


def test_repeats_cannot_help_when_probes_alone_are_too_noisy():
    p = plan(measure(_repeated(2)), 1)
    assert p.repeats_needed is None and "more repeats cannot reach it" in p.repeats_reason
    assert p.probes_needed > 400


def test_probes_missing_from_a_run_are_left_out_and_counted():
    second = TWO_CLUSTERS[:-1] + [ProbeOutcome("b", "p3", "recall", None)]
    variance = measure([TWO_CLUSTERS, second])
    assert (variance.probes, variance.dropped, variance.repeats) == (7, 1, 2)


def test_what_cannot_be_planned_says_why_instead_of_a_number():
    assert plan(measure([]), 5).reason == "fewer than two probes scored in every run"
    same = plan(measure([_run({"a": [True, True], "b": [True, True]})]), 5)
    assert same.reason == "every probe got the same verdict: no variance to plan from"
    alone = plan(measure([_run({"a": [True, False, True]})]), 5)
    assert "one cluster" in alone.reason and alone.probes_needed is None and alone.mde_pp is None
    singletons = plan(measure([_run({"a": [True], "b": [False], "c": [True]})]), 5)
    assert singletons.variance.design_effect == 1.0 and singletons.probes_needed is not None
    with pytest.raises(ValueError, match="positive"):
        plan(measure([TWO_CLUSTERS]), 0)
