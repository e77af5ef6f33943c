"""Dense search within a few nodes, from per-node copies, equals scoring every row exactly."""

from __future__ import annotations

import numpy as np
import pytest

from memeval.engines.reference import kernel as reference_kernel
from memeval.engines.reference.embedders import DenseIndex, QueryVectors
from memeval.engines.reference.tuning import Tuning

# Batches of 100 texts, so that a few hundred writes make several blocks.
SMALL_BATCHES = Tuning(batch=100)


@pytest.fixture(params=["numpy", "compiled"])
def scorer(request) -> Tuning:
    """Each way a few nodes are scored: numpy, or compiled code (every tenant counting as large)."""
    if request.param == "compiled":
        if not reference_kernel.available():
            pytest.skip("the fast extra (numba) is not installed")
        return Tuning(batch=100, compiled_docs=0)
    return SMALL_BATCHES


class Random8d:
    name = "random-8d"

    def __init__(self) -> None:
        self.rng = np.random.default_rng(9)
        self.table: dict[str, np.ndarray] = {}

    def embed(self, texts):
        rows = [self.table.setdefault(t, self.rng.standard_normal(8).astype(np.float32)) for t in texts]
        vecs = np.array(rows, dtype=np.float32).reshape(len(texts), 8)
        return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


def exact(index: DenseIndex, embedder: Random8d, query: str, nodes: set[int], live: set[int], k: int):
    vec = embedder.embed([query])[0]
    scored = [(doc, float(embedder.table[f"text {doc}"] @ vec / np.linalg.norm(embedder.table[f"text {doc}"])))
              for doc in sorted(live) if doc % 40 in nodes]
    return sorted(scored, key=lambda pair: (-pair[1], pair[0]))[:k]


def test_a_few_nodes_are_scored_exactly_across_writes_and_removals(scorer):
    embedder = Random8d()
    index = DenseIndex(QueryVectors(embedder), min_similarity=-1.0, tuning=scorer)
    live: set[int] = set()

    def write(first: int, count: int) -> None:
        docs = range(first, first + count)
        index.add_many(first, [doc % 40 for doc in docs], [f"text {doc}" for doc in docs])
        live.update(docs)

    write(0, 1000)
    for round_, (nodes, query) in enumerate([({3}, "q one"), ({3, 17}, "q two"), ({3}, "q three")]):
        got = index.search(query, sorted(nodes), 7)
        want = exact(index, embedder, query, nodes, live, 7)
        assert [doc for doc, _ in got] == [doc for doc, _ in want]
        assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5)
        # Between searches: more writes (some still queued at the next search) and removals.
        write(len(index), 250 + round_)
        gone = {doc for doc in live if doc % 40 == 3 and doc % 7 == round_}
        index.remove(gone)
        live -= gone


@pytest.mark.parametrize("saved_copies", [True, False], ids=["copies saved", "saved before copies were"])
def test_a_reopened_index_scores_a_few_nodes_exactly_and_keeps_growing(tmp_path, saved_copies, scorer):
    # Reopening maps the saved copies (or builds them from the vectors of a tenant saved before
    # they were); later batches extend them.
    embedder = Random8d()
    index = DenseIndex(QueryVectors(embedder), min_similarity=-1.0, tuning=scorer)
    index.add_many(0, [doc % 40 for doc in range(900)], [f"text {doc}" for doc in range(900)])
    index.remove({doc for doc in range(900) if doc % 40 == 5 and doc % 3 == 0})
    index.save(tmp_path / "dense")
    if not saved_copies:
        for name in ("blocks.npy", "block-docs.npy", "block-vectors.npy"):
            (tmp_path / "dense" / name).unlink()
    opened = DenseIndex.load(tmp_path / "dense", QueryVectors(embedder), min_similarity=-1.0, tuning=scorer)
    opened.add_many(900, [doc % 40 for doc in range(900, 1200)], [f"text {doc}" for doc in range(900, 1200)])
    live = {doc for doc in range(1200) if not (doc < 900 and doc % 40 == 5 and doc % 3 == 0)}
    for nodes, query in [({5}, "q one"), ({5, 21}, "q two"), ({39}, "q three")]:
        got = opened.search(query, sorted(nodes), 9)
        want = exact(opened, embedder, query, nodes, live, 9)
        assert [doc for doc, _ in got] == [doc for doc, _ in want]
        assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5)


def test_copies_that_do_not_fit_their_files_are_refused_when_the_tenant_opens(tmp_path):
    embedder = Random8d()
    index = DenseIndex(QueryVectors(embedder), min_similarity=-1.0, tuning=SMALL_BATCHES)
    index.add_many(0, [doc % 4 for doc in range(200)], [f"text {doc}" for doc in range(200)])
    index.save(tmp_path / "dense")
    table = np.load(tmp_path / "dense" / "blocks.npy")
    table[2, -1] += 1  # the last node claims a row past the end of the files
    np.save(tmp_path / "dense" / "blocks.npy", table)
    with pytest.raises(ValueError, match="blocks.npy does not match"):
        DenseIndex.load(tmp_path / "dense", QueryVectors(embedder), min_similarity=-1.0)
