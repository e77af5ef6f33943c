"""The matcher: word boundaries, number-awareness, grading with accept and stale."""

import pytest

from memeval.score.match import contains, grade


@pytest.mark.parametrize("text,needle,found", [
    ("it happens often", "ten", False),
    ("we counted ten", "ten", True),
    ("price 6,500 USD", "6500", True),
    ("price 6500", "6,500", True),
    ("6 500 units", "6500", True),
    ("65000", "6500", False),
    ("version 6.5", "6", False),
    ("x 0.5 y", "5", False),
    ("a 6.5 b", "6.5", True),
    ("failsafe mode", "fail", False),
    ("Fail.", "fail", True),
    ("p99 was 2.3   s", "2.3 s", True),
    ("use pnpm@9", "pnpm", True),
    ("1,200,000 rows", "1200000", True),
    ("INV-88 paid", "inv-88", True),
    ("INV-881 paid", "INV-88", False),
])
def test_word_mode(text, needle, found):
    assert contains(text, needle, "word") is found


def test_substring_mode_keeps_the_original_behaviour():
    assert contains("it happens often", "ten", "substring")
    assert not contains("price 6,500", "6500", "substring")


def test_grade_requires_all_expect_or_one_whole_accept_and_no_stale():
    assert grade("moved to 40 Canal Road", ("40 Canal Road",), (), ("12 Harbour",), "word")
    assert not grade("40 Canal Road, was 12 Harbour", ("40 Canal Road",), (), ("12 Harbour",), "word")
    assert grade("uses pnpm v9", ("yarn",), (("pnpm", "v9"),), (), "word")
    assert not grade("uses pnpm", ("yarn",), (("pnpm", "v9"),), (), "word")
