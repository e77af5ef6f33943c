"""Repeat churn, KPI spread over repeats, Cohen's κ, self-consistency and the errata ceiling."""

from __future__ import annotations

import pytest

from memeval.stats.clustered import cohen_kappa, errata_ceiling, flip_rate, spread
from memeval.stats.basic import Rate

REPEATS: list[dict[str, bool | None]] = [
    {"a": True, "b": True, "c": False, "d": True, "e": True},
    {"a": True, "b": False, "c": False, "d": None, "e": False},
    {"a": True, "b": True, "c": False, "e": None},
]


def test_flip_rate_counts_probes_whose_verdict_changed_over_those_scored_twice():
    # b flipped, e flipped (scored twice), a and c held, d was scored once and cannot flip.
    assert flip_rate(REPEATS) == Rate(2, 4)


def test_one_repeat_has_no_flip_rate_rather_than_zero():
    rate = flip_rate(REPEATS[:1])
    assert (rate.n, rate.value) == (0, None)


def test_spread_of_a_kpi_over_repeats():
    s = spread([0.5, 0.7, None, 0.6])
    assert (s.n, s.low, s.high) == (3, 0.5, 0.7)
    assert s.sd == pytest.approx(0.1)
    assert spread([0.4]).sd is None
    assert spread([None, None]) == spread([])
    assert spread([]).low is None


def test_kappa_on_a_worked_table():
    # 20 both yes, 5 judge-only yes, 10 matcher-only yes, 15 both no: p_o = 0.7,
    # p_e = 0.5·0.6 + 0.5·0.4 = 0.5, κ = 0.2 / 0.5 = 0.4.
    cells = [(True, True)] * 20 + [(True, False)] * 5 + [(False, True)] * 10 + [(False, False)] * 15
    judge = {i: j for i, (j, _) in enumerate(cells)}
    matcher = {i: m for i, (_, m) in enumerate(cells)}
    kappa = cohen_kappa(judge, matcher)
    assert (kappa.kappa, kappa.n, kappa.reason) == (0.4, 50, None)
    assert kappa.observed == pytest.approx(0.7) and kappa.expected == pytest.approx(0.5)


def test_kappa_leaves_out_items_either_rater_did_not_rate():
    judge = {"a": True, "b": False, "c": None, "d": True}
    matcher = {"a": True, "b": False, "c": True}
    assert cohen_kappa(judge, matcher).n == 2
    assert cohen_kappa(judge, matcher).kappa == 1.0


def test_kappa_is_undefined_not_a_number_when_nothing_varies_or_nothing_is_rated():
    same = {"a": True, "b": True}
    k = cohen_kappa(same, dict(same))
    assert (k.kappa, k.n, k.observed) == (None, 2, 1.0)
    assert "undefined" in k.reason
    assert cohen_kappa({}, {}).kappa is None and cohen_kappa({}, {}).n == 0


def test_kappa_below_chance_is_negative():
    judge = {1: True, 2: False, 3: True, 4: False}
    matcher = {1: False, 2: True, 3: False, 4: True}
    assert cohen_kappa(judge, matcher).kappa == -1.0


def test_errata_ceiling_scores_disputed_gold_apart():
    outcomes = {"q1": True, "q2": False, "q3": True, "q4": None, "q5": False}
    ceiling = errata_ceiling(outcomes, {"q2", "q4", "q9"})
    assert ceiling.all == Rate(2, 4)
    assert ceiling.clean == Rate(2, 3)
    assert ceiling.disputed == Rate(0, 1)
    assert ceiling.ceiling == Rate(3, 4)


def test_errata_ceiling_without_scored_items_stays_empty():
    ceiling = errata_ceiling({"q1": None}, {"q1"})
    assert ceiling.all.value is None and ceiling.ceiling.value is None
