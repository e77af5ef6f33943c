"""The IVF index of the ``ann`` extra: close to exact, persisted whole, strict about row order."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("faiss", reason="the ann extra (faiss-cpu) is not installed")

from memeval.engines.reference.ann import AnnIndex  # noqa: E402
from memeval.engines.reference.tuning import Tuning  # noqa: E402

# Probe the default number of lists, not every one.
PROBE_ONLY = Tuning(scan=0)


def unit_rows(count: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((count, 16)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_it_finds_the_exact_top_ten_and_reopens_with_the_same_answers(tmp_path):
    vectors = unit_rows(3000, 1)
    index = AnnIndex(16, tuning=PROBE_ONLY)
    index.add(0, vectors[:2000])  # trains 125 lists, of which a search probes 64
    index.add(2000, vectors[2000:])
    queries = unit_rows(20, 2)
    found = 0
    for query in queries:
        rows, sims = index.search(query, 10)
        exact = np.argsort(-(vectors @ query))[:10]
        found += len(set(rows.tolist()) & set(exact.tolist()))
        # 8-bit codes: cosines within 0.01 of the exact ones (the engine rescores its candidates)
        assert np.allclose(sims, vectors[rows] @ query, atol=0.01) and list(sims) == sorted(sims, reverse=True)
    assert found >= 0.9 * 200 and len(index) == 3000
    index.save(tmp_path / "ann.faiss")
    again = AnnIndex(16, tmp_path / "ann.faiss", PROBE_ONLY)
    assert len(again) == 3000
    for query in queries:
        assert again.search(query, 10)[0].tolist() == index.search(query, 10)[0].tolist()


def test_rows_come_in_order_and_training_needs_vectors():
    index = AnnIndex(16)
    assert index.search(unit_rows(1, 3)[0], 5)[0].size == 0  # nothing added yet
    with pytest.raises(ValueError, match="training needs 16"):
        index.add(0, unit_rows(8, 4))
    index.add(0, unit_rows(64, 5))
    with pytest.raises(ValueError, match="row 10 out of order"):
        index.add(10, unit_rows(4, 6))
