"""A posting segment's postings regrouped by node, for the reference engine's searches within a
few nodes of a large tenant (:class:`memeval.engines.reference.index.LexicalIndex`).

A section of one agent, the learnings or the documents is a small share of a large tenant,
while each of a question's terms has postings all over it: filtering every posting by its node
reads twenty times what the section holds. A :class:`NodeSplit` holds one segment's postings
ordered by node, then term, then document (a stable sort by node of the segment's own order), so
a section reads only its nodes' postings of the question's terms. It is built on the first such
search after the segment appears (segments are immutable; a merge or a removal makes new ones).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from memeval.engines.reference.postings import Segment


class NodeSplit(NamedTuple):
    """Node ``n``'s postings at ``[bounds[n], bounds[n + 1])`` of ``tids``, ``docs`` and ``tfs``,
    by term id, then document; a node code past ``bounds`` has none."""

    bounds: Any  # int64, shape (width + 1,)
    tids: Any  # int32
    docs: Any  # int32
    tfs: Any  # uint16


def split(segment: Segment, node: Any, width: int) -> NodeSplit:
    """``segment``'s postings by node; ``node`` is every document's node code, below ``width``."""
    tids = np.repeat(np.arange(len(segment.starts) - 1, dtype=np.int32), np.diff(segment.starts))
    codes = np.take(node, segment.docs)
    # numpy sorts 16-bit keys by radix: a few milliseconds per million postings
    order = np.argsort(codes.astype(np.int16) if width <= np.iinfo(np.int16).max else codes, kind="stable")
    bounds = np.zeros(width + 1, dtype=np.int64)
    np.cumsum(np.bincount(codes, minlength=width), out=bounds[1:])
    return NodeSplit(bounds, tids[order], segment.docs[order], segment.tfs[order])


def postings(parts: Sequence[NodeSplit], nodes: Sequence[int], tids: Sequence[int]) -> list[tuple[Any, Any]]:
    """For each of ``tids``, its documents (increasing) and term frequencies within ``nodes``, over
    the splits of a tenant's segments (oldest first)."""
    found: list[list[tuple[Any, Any]]] = [[] for _ in tids]
    wanted = np.asarray(tids, dtype=np.int32)
    for part in parts:
        for code in nodes:
            if code + 1 >= len(part.bounds):
                continue
            lo, hi = int(part.bounds[code]), int(part.bounds[code + 1])
            if lo == hi:
                continue
            held = part.tids[lo:hi]
            starts = np.searchsorted(held, wanted, side="left") + lo
            ends = np.searchsorted(held, wanted, side="right") + lo
            for i, (start, end) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
                if end > start:
                    found[i].append((part.docs[start:end], part.tfs[start:end]))
    out = []
    for runs in found:
        if not runs:
            out.append((np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.uint16)))
            continue
        docs = np.concatenate([d for d, _ in runs]) if len(runs) > 1 else runs[0][0]
        tfs = np.concatenate([t for _, t in runs]) if len(runs) > 1 else runs[0][1]
        if len(nodes) > 1:  # several nodes' runs of one segment interleave
            order = np.argsort(docs, kind="stable")
            docs, tfs = docs[order], tfs[order]
        out.append((docs, tfs))
    return out


class NodeDocs:
    """Each node's documents (increasing), extended as documents are written: for a search that
    reads a small section's scores out of an array of every document's
    (:func:`memeval.engines.reference.search.seeded_top_k`). Removed documents stay listed; their
    scores are 0, which no match has."""

    _CHUNKS = 8

    def __init__(self) -> None:
        self._chunks: list[list[Any]] = []
        self._upto = 0

    def of(self, node: Any, count: int, nodes: Sequence[int]) -> Any:
        """The documents of ``nodes`` among the first ``count``, whose node codes ``node``
        holds: each node's increasing, one node after another."""
        if self._upto < count:
            self._extend(node, count)
        parts = [chunk for code in nodes if code < len(self._chunks) for chunk in self._chunks[code]]
        if not parts:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate(parts) if len(parts) > 1 else parts[0]

    def _extend(self, node: Any, count: int) -> None:
        codes = node[self._upto : count]
        order = np.argsort(codes, kind="stable")
        bounds = np.zeros(int(codes.max()) + 2, dtype=np.int64)
        np.cumsum(np.bincount(codes), out=bounds[1:])
        docs = order.astype(np.int64) + self._upto
        self._chunks.extend([] for _ in range(len(bounds) - 1 - len(self._chunks)))
        for code in np.flatnonzero(np.diff(bounds)).tolist():
            chunks = self._chunks[code]
            chunks.append(docs[bounds[code] : bounds[code + 1]])
            if len(chunks) > self._CHUNKS:
                chunks[:] = [np.concatenate(chunks)]
        self._upto = count
