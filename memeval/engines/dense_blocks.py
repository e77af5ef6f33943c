"""Per-node copies of a tenant's dense vectors, for the reference engine's searches within a few
nodes (:class:`memeval.engines.embedders.DenseIndex`).

A section of one agent is a few percent of a large tenant, scattered through its rows: scoring it
from the tenant's matrix gathers every one of its rows first (5 ms for 25k rows of a 500k-row
tenant here), where scoring a contiguous copy is one pass. A node's copy is made the first time a
search asks for it and extended with every batch embedded after, so only nodes that are searched
cost memory (at most the tenant's vectors once more). Rows removed later stay in the copies; the
caller filters them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np


class _Block:
    """One node's documents (increasing) and their vectors, with room to grow."""

    def __init__(self, docs: Any, vecs: Any) -> None:
        self.size = len(docs)
        self.docs = np.array(docs, dtype=np.int64)
        self.vecs = np.array(vecs, dtype=np.float32)

    def extend(self, docs: Any, vecs: Any) -> None:
        end = self.size + len(docs)
        if end > len(self.docs):
            capacity = max(end, 2 * len(self.docs), 256)
            self.docs = np.resize(self.docs, capacity)
            grown = np.empty((capacity, self.vecs.shape[1]), dtype=np.float32)
            grown[: self.size] = self.vecs[: self.size]
            self.vecs = grown
        self.docs[self.size : end] = docs
        self.vecs[self.size : end] = vecs
        self.size = end


class NodeBlocks:
    """The per-node copies of one tenant (see the module docstring)."""

    def __init__(self) -> None:
        self._blocks: dict[int, _Block] = {}

    def scores(self, nodes: Iterable[int], query: Any, rows_of: Any, vecs: Any) -> tuple[Any, Any]:
        """The documents of ``nodes`` and their dot products with ``query``, node by node;
        ``rows_of(node)`` lists a node's documents and ``vecs`` is the tenant's matrix, both
        read only for a node searched the first time."""
        docs, sims = [], []
        for node in nodes:
            block = self._blocks.get(node)
            if block is None:
                rows = rows_of(node)
                if not len(rows):
                    continue
                block = self._blocks[node] = _Block(rows, vecs[rows])
            docs.append(block.docs[: block.size])
            sims.append(np.einsum("ij,j->i", block.vecs[: block.size], query))
        if not docs:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        return np.concatenate(docs), np.concatenate(sims)

    def extend(self, first: int, codes: Any, vecs: Any) -> None:
        """Add a batch embedded as rows ``first``, ``first + 1``, ... to the copies made so far;
        ``codes`` holds each row's node + 1 (0 for a removed row, which is left out)."""
        for node, block in self._blocks.items():
            mine = np.flatnonzero(codes == node + 1)
            if mine.size:
                block.extend(mine + first, vecs[mine])
