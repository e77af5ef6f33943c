"""The reference engine's lexical index returns exactly the BM25 top k of an exhaustive scorer,
whichever pruning path a search takes (tests/engines/reference/test_engine.py covers the engine)."""

from __future__ import annotations

import math
import random

import pytest

from memeval.engines.reference import kernel as reference_kernel
from memeval.engines.reference.index import LexicalIndex
from memeval.engines.reference.tuning import Tuning
from memeval.text.analyze import analyze


def test_lexical_index_matches_textbook_bm25():
    docs = ["apple banana apple", "banana cherry", "cherry date elder fig", "apple"]
    index = LexicalIndex()
    for doc, text in enumerate(docs):
        index.add(doc, 0, text)
    query = analyze("apple cherry")
    got = dict(index.search(query, [0], 10))
    terms = [analyze(t) for t in docs]
    avgdl = sum(map(len, terms)) / len(terms)
    for doc, words in enumerate(terms):
        want = 0.0
        for term in set(query):
            df = sum(term in t for t in terms)
            tf = words.count(term)
            idf = math.log(1 + (len(terms) - df + 0.5) / (df + 0.5))
            want += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(words) / avgdl)) if tf else 0.0
        assert got.get(doc, 0.0) == pytest.approx(want, rel=1e-12)


def brute_bm25(docs: dict[int, list[str]], section: set[int], nodes: dict[int, int], query: list[str]) -> dict:
    """Textbook BM25 over the live ``docs``, restricted to documents whose node is in ``section``."""
    avgdl = sum(map(len, docs.values())) / len(docs)
    dfs = {term: sum(term in other for other in docs.values()) for term in set(query)}
    scores = {}
    for doc, words in docs.items():
        if nodes[doc] not in section:
            continue
        score = 0.0
        for term in set(query):
            tf = words.count(term)
            df = dfs[term]
            if tf:
                idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
                score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(words) / avgdl))
        if score:
            scores[doc] = score
    return scores


@pytest.mark.parametrize(("flush", "direct"), [(1, 0), (7, 0), (4096, 0), (4096, 32768)])
def test_exact_search_equals_brute_force_bm25_over_random_sections_and_removals(flush, direct):
    # direct 0: every search prunes with MaxScore; 32768: these small ones score every posting.
    tuning = Tuning(flush=flush, direct=direct)
    rng = random.Random(5)
    vocabulary = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta"]
    for trial in range(30):
        index, docs, nodes = LexicalIndex(tuning), {}, {}
        for doc in range(rng.randint(1, 60)):
            words = [rng.choice(vocabulary) for _ in range(rng.randint(1, 8))]
            docs[doc], nodes[doc] = words, rng.randrange(4)
            index.add(doc, nodes[doc], " ".join(words))
        gone = set(rng.sample(sorted(docs), rng.randint(0, len(docs) // 2)))
        index.remove({doc: nodes[doc] for doc in gone})
        live = {doc: words for doc, words in docs.items() if doc not in gone}
        query = rng.sample(vocabulary, 3)
        section = set(rng.sample(range(4), rng.randint(1, 4)))
        k = rng.choice([1, 2, 5, 100])
        got = index.search(query, section, k)
        want = brute_bm25(live, section, nodes, query) if live else {}
        assert [doc for doc, _ in got] == sorted(want, key=lambda doc: (-round(want[doc], 6), doc))[:k], trial
        assert all(score == pytest.approx(want[doc], rel=1e-12) for doc, score in got)


# Every search prunes with MaxScore: no query is small enough to score every posting.
PRUNED = Tuning(direct=0)


def test_pruned_top_k_equals_brute_force_on_a_skewed_vocabulary():
    # Many common terms and a few rare ones, small k: MaxScore leaves common terms out of the
    # candidates, so this is where a wrong bound would drop a true top-k document.
    rng = random.Random(8)
    vocabulary = [f"w{i:02d}x" for i in range(60)]
    weights = [1 / (rank + 1) for rank in range(60)]
    index, docs, nodes = LexicalIndex(PRUNED), {}, {}
    for doc in range(3000):
        docs[doc] = rng.choices(vocabulary, weights, k=rng.randint(1, 14))
        nodes[doc] = rng.randrange(5)
    for start in range(0, 3000, 500):
        index.add_many(start, [nodes[d] for d in range(start, start + 500)],
                       [" ".join(docs[d]) for d in range(start, start + 500)])
    for trial in range(40):
        query = rng.choices(vocabulary, weights, k=rng.randint(1, 8))
        section = set(rng.sample(range(5), rng.randint(1, 5)))
        k = rng.choice([1, 3, 10, 24])
        want = brute_bm25(docs, section, nodes, query)
        ranked = sorted(want, key=lambda doc: (-want[doc], doc))
        got = index.search(query, section, k)
        assert [doc for doc, _ in got] == ranked[:k], trial
        assert all(score == pytest.approx(want[doc], rel=1e-12) for doc, score in got)


# Each pruning path of the search forced on by its knobs (memeval.engines.reference.tuning);
# every search prunes (direct 0), filters every posting (narrow 0) and its probe reads a few
# hundred postings (the default reads all of these small corpora's).
PATHS = {
    "sparse sums": {"dense_share": 0},
    "dense, every non-essential term added": {"dense_share": 10**9, "lookup": 10**9},
    "dense, every non-essential term looked up": {"dense_share": 10**9, "lookup": 0},
    "postings filtered before scoring": {"filter_after": 2.0},
    "candidates filtered after scoring": {"filter_after": 0.0},
    "probe of one term and k documents": {"probe_postings": 1, "probe_docs": 1},
    "probe of every term": {"probe_postings": 10**9},
    "tiny probe, sparse, filtered after": {"probe_postings": 1, "probe_docs": 1, "dense_share": 0,
                                           "filter_after": 0.0},
    # Every tenant counts as large: searches score the question into one array in compiled code
    # (numba) and scan it for the section's best.
    "compiled kernel for large sections": {"compiled_docs": 0},
    # ... and every section short of the whole tenant reads its own documents' scores from it.
    "compiled kernel, sections read their documents' scores": {"compiled_docs": 0, "narrow": 1.0},
    # ... with questions of few postings scored in one flat run and their feedback queries not.
    "compiled kernel after a flat question": {"compiled_docs": 0, "direct": 3000, "compiled_flat": 0},
    "compiled kernel after a flat question, sections read their documents' scores": {
        "compiled_docs": 0, "direct": 3000, "compiled_flat": 0, "narrow": 1.0},
    # ... and, as by default, a flat run only for questions of a sixteenth of the documents or fewer.
    "compiled kernel, flat only for the rarest questions": {"compiled_docs": 0, "direct": 32768},
    # Every section short of the whole tenant reads its own nodes' postings (reference_split).
    "sections read their nodes' postings, pruned": {"narrow": 1.0},
    "sections read their nodes' postings, scored whole": {"narrow": 1.0, "direct": 32768},
}


def skewed_words(rng: random.Random) -> list[str]:
    """One document: Zipf-like words over 60, and one word ("everyx") in nine documents of ten."""
    vocabulary = [f"w{i:02d}x" for i in range(60)]
    words = rng.choices(vocabulary, [1 / (rank + 1) for rank in range(60)], k=rng.randint(1, 14))
    return words + ["everyx"] * (rng.random() < 0.9) * rng.randint(1, 3)


@pytest.mark.parametrize("path", sorted(PATHS))
def test_every_pruning_path_equals_brute_force_across_writes_and_removals(path):
    if "compiled_docs" in PATHS[path] and not reference_kernel.available():
        pytest.skip("the fast extra (numba) is not installed")
    tuning = Tuning(**{"direct": 0, "probe_postings": 300, "compiled_docs": 10**9, "narrow": 0.0, **PATHS[path]})
    rng = random.Random(11)
    index, docs, nodes = LexicalIndex(tuning), {}, {}
    # Queries lean to the common words, whose small bounds make them non-essential.
    vocabulary = [f"w{i:02d}x" for i in range(60)] + ["everyx", "absentx"]
    weights = [1 / (rank + 1) for rank in range(60)] + [1.0, 0.1]
    for trial in range(36):
        if trial % 6 == 0:  # writes and removals between searches: N, df and avgdl all move
            start = len(nodes)
            batch = [skewed_words(rng) for _ in range(400)]
            codes = rng.choices(range(5), [60, 30, 5, 4, 1], k=len(batch))
            index.add_many(start, codes, [" ".join(words) for words in batch])
            docs.update(enumerate(batch, start))
            nodes.update(enumerate(codes, start))
            gone = set(rng.sample(sorted(docs), len(docs) // 20))
            index.remove(gone)
            docs = {doc: words for doc, words in docs.items() if doc not in gone}
        size = rng.choice([1, 2, 8, 25])
        query = rng.choices(vocabulary, weights, k=size)
        section = set(rng.sample(range(5), rng.randint(1, 5)))
        k = rng.choice([1, 3, 24, 100])
        # the question, then a feedback query: the question's terms and a few more
        for asked in (query, query + rng.choices(vocabulary, weights, k=3)):
            want = brute_bm25(docs, section, nodes, asked)
            got = index.search(asked, section, k)
            assert [doc for doc, _ in got] == sorted(want, key=lambda doc: (-want[doc], doc))[:k], (trial, asked)
            assert all(score == pytest.approx(want[doc], rel=1e-12) for doc, score in got)


def test_a_section_without_a_matching_document_finds_nothing():
    index = LexicalIndex(PRUNED)
    index.add_many(0, [0] * 50 + [1] * 50, ["alpha beta"] * 50 + ["gamma"] * 50)
    assert index.search(["alpha"], [1], 5) == []
    assert index.search(["alpha"], [2], 5) == []
    assert [doc for doc, _ in index.search(["alpha", "gamma"], [1], 3)] == [50, 51, 52]



def test_a_node_written_after_the_first_narrow_search_is_found():
    # The older segments' postings were split by node before node 7 existed.
    index, docs, nodes = LexicalIndex(Tuning(direct=0, narrow=1.0)), {}, {}

    def write(start: int, codes: list[int], texts: list[str]) -> None:
        index.add_many(start, codes, texts)
        docs.update((start + i, analyze(text)) for i, text in enumerate(texts))
        nodes.update((start + i, code) for i, code in enumerate(codes))

    write(0, [0] * 300 + [1] * 300, ["alpha beta"] * 300 + ["alpha gamma delta"] * 300)
    assert [doc for doc, _ in index.search(["alpha"], [1], 3)] == [300, 301, 302]
    write(600, [7] * 5, ["alpha"] * 5)
    for section in ([7], [0, 7], [1, 7]):
        want = brute_bm25(docs, set(section), nodes, ["alpha"])
        got = index.search(["alpha"], section, 4)
        assert [doc for doc, _ in got] == sorted(want, key=lambda doc: (-want[doc], doc))[:4], section


def test_the_compiled_kernel_keeps_the_older_of_equal_scores_whatever_term_they_hold():
    # Two terms of equal df: the newer documents hold the query's first term, the older ones its
    # second, so a kernel that kept the first equal score it met would keep the newer.
    if not reference_kernel.available():
        pytest.skip("the fast extra (numba) is not installed")
    index = LexicalIndex(Tuning(compiled_docs=0, direct=0))
    texts = ["fillerx"] * 200
    texts[10], texts[20], texts[30], texts[40] = "betax other", "alphax other", "alphax other", "betax other"
    index.add_many(0, [0] * len(texts), texts)
    assert [doc for doc, _ in index.search(["alphax", "betax"], [0], 1)] == [10]
    assert [doc for doc, _ in index.search(["alphax", "betax"], [0], 3)] == [10, 20, 30]
