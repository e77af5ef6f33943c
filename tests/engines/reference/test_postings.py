"""The reference engine's posting segments: building, merging and when segments are merged."""

from __future__ import annotations

import numpy as np

from memeval.engines.reference import postings
from memeval.engines.reference.tuning import Tuning


def segment(first: int, rows: list[list[int]], terms: int) -> postings.Segment:
    """A segment of documents ``first``, ``first + 1``, ... holding the term ids of ``rows``."""
    tids = np.array([tid for row in rows for tid in row], dtype=np.int64)
    docs = np.array([first + i for i, row in enumerate(rows) for _ in row], dtype=np.int32)
    return postings.build(tids, docs, terms, len(rows))


def as_lists(parts: list[postings.Segment], terms: int) -> dict[int, list[tuple[int, int]]]:
    """Each term's (document, frequency) pairs over ``parts`` in order."""
    return {tid: [(int(d), int(f)) for part in parts for d, f in zip(*part.postings(tid), strict=True)]
            for tid in range(terms)}


def test_a_tenant_of_few_postings_keeps_them_in_one_segment() -> None:
    parts = [segment(i, [[i % 3, 3, 3]], 4) for i in range(5)]
    compacted = postings.compact(parts, 4, Tuning().one_segment)
    assert len(compacted) == 1 and compacted[0].size == 5
    assert as_lists(compacted, 4) == as_lists(parts, 4)
    assert as_lists(compacted, 4)[3] == [(doc, 2) for doc in range(5)]


def test_many_postings_merge_by_tiers_and_stay_in_document_order() -> None:
    parts: list[postings.Segment] = []
    rng = np.random.default_rng(3)
    for i in range(postings.FANOUT - 1):
        parts = postings.compact([*parts, segment(i, [list(rng.integers(0, 6, 4))], 6)], 6, one_segment=0)
    assert len(parts) == postings.FANOUT - 1  # one tier short of a merge
    whole = as_lists(parts, 6)
    parts = postings.compact([*parts, segment(postings.FANOUT - 1, [[5, 5]], 6)], 6, one_segment=0)
    assert len(parts) == 1 and parts[0].size == postings.FANOUT
    merged = as_lists(parts, 6)
    assert merged == {tid: whole[tid] + ([(postings.FANOUT - 1, 2)] if tid == 5 else []) for tid in range(6)}
    assert all(docs == sorted(docs) for docs in ([d for d, _ in pairs] for pairs in merged.values()))
