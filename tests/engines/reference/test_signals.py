"""The compiled text signals (memeval/engines/reference/signals.py) equal Query.measure's to the
bit, and a large tenant's ranking uses them."""

from __future__ import annotations

import random

import pytest

from memeval.engines.reference import kernel as reference_kernel

from memeval.engines.reference import signals as reference_signals
from memeval.text.analyze import flatten
from memeval.engines.reference.rank import STOPWORD_WEIGHT, Query, Texts
from memeval.engines.reference.tuning import DEFAULT

pytestmark = pytest.mark.skipif(not reference_kernel.available(), reason="the fast extra (numba) is not installed")

# Inflections, stopwords, one- and two-letter words, digits and non-ASCII words of two to
# three bytes a character, so needles of every length and byte width occur.
VOCABULARY = ("deploy deployed deploying redeploy rollout staging prod café cafés naïve über x a i the of off "
              "budget budgets q3 ñandú résumé 東京 東京都 k8s ab é ok okay").split()


def measured(query: Query, flats: list[str]) -> list[tuple[float, float]]:
    probes = reference_signals.needles(query.words, STOPWORD_WEIGHT, query.total, query.grams, query._gram_words)
    return reference_signals.measure(probes, flats)


def test_compiled_shares_equal_the_python_shares_to_the_bit():
    rng = random.Random(4)

    def text(low: int, high: int) -> str:
        return " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(low, high)))

    # Empty texts, one word, and texts long enough to grow the kernel's tables.
    flats = [f" {flatten(text(0, 400 if i % 50 == 0 else 40))} " for i in range(300)]
    for _ in range(150):
        query = Query(text(1, 16))
        assert measured(query, flats) == [query.measure(flat) for flat in flats], query.text


def test_a_query_without_words_measures_zero_everywhere():
    query = Query("?! ...")
    assert measured(query, [" deploy ", "  "]) == [(0.0, 0.0), (0.0, 0.0)]


def test_a_large_tenant_measures_its_pool_in_compiled_code(monkeypatch):
    texts = ["Deployed the café rollout", "budget for q3 was cut", "東京 office", "nothing here"]
    calls = []
    real = reference_signals.measure

    def spy(probes, flats):
        calls.append(len(flats))
        return real(probes, flats)

    monkeypatch.setattr(reference_signals, "measure", spy)
    query = Query("what did we deploy at the cafe in 東京")
    small = Texts(texts.__getitem__, lambda: DEFAULT.compiled_docs - 1)
    query.measure_all(range(4), small)
    assert calls == []
    large = Texts(texts.__getitem__, lambda: DEFAULT.compiled_docs)
    query.measure_all([0, 1, 1, 2, 3], large)
    assert calls == [4]
    assert [query.shares(doc, large) for doc in range(4)] == [query.measure(large.flat(doc)) for doc in range(4)]
    query.measure_all(range(4), large)  # measured once
    assert calls == [4]
