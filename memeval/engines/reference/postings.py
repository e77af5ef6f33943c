"""Immutable posting segments for the reference engine's lexical index (numpy, CSR by term id).

A segment holds the postings of a run of consecutive documents: for every term id ``t``, the
documents holding it (increasing) and how often, at ``docs[starts[t]:starts[t + 1]]`` and
``tfs[...]``. Segments cover disjoint, increasing document ranges, so one term's postings over
a list of segments, concatenated in order, are sorted by document. Segments are merged in
tiers of :data:`FANOUT` (a log-structured merge): a tenant of n documents has
O(FANOUT · log n) segments and each posting is copied O(log n) times, each copy a linear
numpy pass with no sorting.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

FANOUT = 8
MAX_SEGMENTS = 48
_DOC_BITS = 32


class Segment(NamedTuple):
    """The postings of one document range; ``starts`` has one entry per term id known when it
    was built, plus one (term ids beyond it have no postings here)."""

    starts: Any  # int64, shape (terms + 1,)
    docs: Any  # int32
    tfs: Any  # uint16
    size: int  # documents covered (its tier is how many merges built it)

    def postings(self, tid: int) -> tuple[Any, Any]:
        """The documents holding term ``tid`` and the term's frequency in each."""
        if tid + 1 >= len(self.starts):
            return self.docs[:0], self.tfs[:0]
        lo, hi = self.starts[tid], self.starts[tid + 1]
        return self.docs[lo:hi], self.tfs[lo:hi]


def build(tids: Any, docs: Any, terms: int, size: int) -> Segment:
    """A segment from one token per row: ``tids[i]`` occurs in ``docs[i]`` (repeats counted)."""
    keys = tids.astype(np.int64) << _DOC_BITS | docs.astype(np.int64)
    unique, counts = np.unique(keys, return_counts=True)
    per_term = np.bincount(unique >> _DOC_BITS, minlength=terms)
    starts = np.zeros(terms + 1, dtype=np.int64)
    np.cumsum(per_term, out=starts[1:])
    tfs = np.minimum(counts, np.iinfo(np.uint16).max).astype(np.uint16)
    return Segment(starts, (unique & 0xFFFFFFFF).astype(np.int32), tfs, size)


def merge(parts: Sequence[Segment], terms: int) -> Segment:
    """One segment holding the postings of ``parts`` (consecutive ranges, oldest first).

    Each posting moves to its term's row in the merged segment, after the same term's postings
    of the older parts: one gather and one scatter per part, no sort.
    """
    counts = [np.diff(_padded(part.starts, terms)) for part in parts]
    starts = np.zeros(terms + 1, dtype=np.int64)
    np.cumsum(np.sum(counts, axis=0), out=starts[1:])
    total = int(starts[-1])
    docs = np.empty(total, dtype=np.int32)
    tfs = np.empty(total, dtype=np.uint16)
    base = starts[:-1].copy()
    for part, count in zip(parts, counts, strict=True):
        rows = np.repeat(np.arange(terms, dtype=np.int64), count)
        shift = base - _padded(part.starts, terms)[:-1]
        target = np.arange(len(part.docs), dtype=np.int64) + shift[rows]
        docs[target] = part.docs
        tfs[target] = part.tfs
        base += count
    return Segment(starts, docs, tfs, sum(part.size for part in parts))


def compact(segments: list[Segment], terms: int, one_segment: int) -> list[Segment]:
    """``segments`` with the last :data:`FANOUT` merged while they are of one tier; all of them
    merged when more than :data:`MAX_SEGMENTS` remain (small segments stranded before a large
    one would otherwise pile up); a tenant of at most ``one_segment`` postings keeps them in
    one segment (merging so few costs less than reading each query term from several)."""
    if len(segments) > 1 and sum(len(segment.docs) for segment in segments) <= one_segment:
        return [merge(segments, terms)]
    while len(segments) >= FANOUT:
        tail = segments[-FANOUT:]
        if _tier(tail[0].size) != _tier(tail[-1].size):
            break
        segments = segments[:-FANOUT] + [merge(tail, terms)]
    if len(segments) > MAX_SEGMENTS:
        segments = [merge(segments, terms)]
    return segments


def purge(segment: Segment, live: Any, terms: int) -> Segment:
    """``segment`` without the postings of documents where ``live`` is False."""
    keep = live[segment.docs]
    count = np.bincount(np.repeat(np.arange(terms), np.diff(_padded(segment.starts, terms))), weights=keep, minlength=terms)
    starts = np.zeros(terms + 1, dtype=np.int64)
    np.cumsum(count.astype(np.int64), out=starts[1:])
    return Segment(starts, segment.docs[keep], segment.tfs[keep], segment.size)


def save(segment: Segment, folder: Path) -> None:
    """Write ``segment`` as ``starts.npy``, ``docs.npy`` and ``tfs.npy`` under ``folder``."""
    for name in ("starts", "docs", "tfs"):
        np.save(folder / f"{name}.npy", getattr(segment, name))


def frequencies(segments: Sequence[Segment], terms: int) -> Any:
    """Each term id's document frequency (int64, ``terms`` of them) over ``segments``."""
    df = np.zeros(terms, dtype=np.int64)
    for segment in segments:
        df += np.diff(_padded(segment.starts, terms))
    return df


def load(folder: Path, size: int) -> Segment:
    """The segment :func:`save` wrote, memory-mapped read-only (nothing is read until used), as
    plain arrays (a numpy memmap's subclass bookkeeping costs microseconds per slice)."""
    arrays = [np.asarray(np.load(folder / f"{name}.npy", mmap_mode="r")) for name in ("starts", "docs", "tfs")]
    return Segment(arrays[0], arrays[1], arrays[2], size)


def _padded(starts: Any, terms: int) -> Any:
    """``starts`` extended to ``terms + 1`` entries (later term ids have no postings)."""
    if len(starts) >= terms + 1:
        return starts[: terms + 1]
    return np.concatenate([starts, np.full(terms + 1 - len(starts), starts[-1], dtype=np.int64)])


def _tier(size: int) -> int:
    """A segment's size class: segments of one tier are merged together."""
    tier = 0
    while size >= FANOUT:
        size //= FANOUT
        tier += 1
    return tier
