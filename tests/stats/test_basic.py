"""Statistics: Wilson intervals, percentiles, exact paired tests, and no number from no data."""

from memeval.stats.basic import Rate, binomial_two_sided, mcnemar_exact, mean_ci, percentile, rate, wilson


def test_rate_over_nothing_is_not_a_number():
    r = rate([None, None])
    assert (r.k, r.n, r.value, r.wilson()) == (0, 0, None, None)
    assert r.text() == "–"


def test_rate_text_and_wilson():
    assert Rate(3, 4).text() == "75% (3/4)"
    assert wilson(5, 10) == (0.2366, 0.7634)
    lo, hi = wilson(10, 10)
    assert hi == 1.0 and 0.72 < lo < 0.73


def test_percentile_uses_the_rounded_index():
    assert percentile([], 0.5) is None
    assert percentile([4, 1, 3, 2], 0.5) == 3
    assert percentile(list(range(1, 101)), 0.95) == 95


def test_mean_ci_needs_two_values():
    assert mean_ci([]) == (None, None)
    assert mean_ci([2.0]) == (2.0, None)
    mean, (lo, hi) = mean_ci([1.0, 2.0, 3.0])
    assert mean == 2.0 and lo < 2.0 < hi


def test_exact_tests():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(1, 0) == 1.0
    assert mcnemar_exact(10, 0) == 2 / 1024
    assert binomial_two_sided(5, 10) == 1.0
