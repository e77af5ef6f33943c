"""The benchmarks' headline aggregates: task-averaged is the mean of type means, abstention
counts inside its type too, LoCoMo is shown with and without category 5, unscored stays apart."""

import pytest

from memeval.benchmarks.locomo.tables import LocomoOutcome, locomo_table
from memeval.benchmarks.longmemeval.tables import LmeOutcome, longmemeval_table


def test_task_averaged_is_the_mean_of_type_means_not_the_overall_rate():
    outcomes = [LmeOutcome("a", "single-session-user", True),
                LmeOutcome("b", "multi-session", False), LmeOutcome("c", "multi-session", False),
                LmeOutcome("d_abs", "multi-session", True), LmeOutcome("e", "knowledge-update", None)]
    table = longmemeval_table(outcomes)
    by_type = dict(table.per_type)
    assert (by_type["multi-session"].k, by_type["multi-session"].n) == (1, 3)  # the _abs item counts in its type
    assert by_type["temporal-reasoning"].n == 0 and by_type["temporal-reasoning"].value is None
    assert table.task_averaged == pytest.approx((1.0 + 1 / 3) / 2) and table.types_present == 2
    assert (table.overall.k, table.overall.n) == (2, 4) and (table.abstention.k, table.abstention.n) == (1, 1)
    assert table.unscored == 1


def test_locomo_is_reported_with_and_without_category_5():
    # a system that always says "not mentioned": 0 on categories 1-4, 1 on category 5
    outcomes = [LocomoOutcome(f"q{i}", c, 1.0 if c == 5 else 0.0) for i, c in enumerate([1, 2, 4, 4, 5, 5])]
    table = locomo_table([*outcomes, LocomoOutcome("q9", 4, None)])
    names = {row.name: row for row in table.per_category}
    assert names["4 single-hop"].n == 2 and names["5 adversarial"].mean == 1.0 and names["3 open-domain"].mean is None
    assert table.with_adversarial.mean == pytest.approx(2 / 6) and table.without_adversarial.mean == 0.0
    assert table.unscored == 1
    assert table.without_adversarial.name == "overall, without category 5" and table.without_adversarial.n == 4
    assert table.policy.startswith("overall is reported twice")
    assert "1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial" in table.policy
