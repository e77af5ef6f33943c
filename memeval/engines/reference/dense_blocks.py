"""Per-node copies of a tenant's dense vectors, for the reference engine's searches within a few
nodes (:class:`memeval.engines.reference.embedders.DenseIndex`).

A section of one agent is a few percent of a large tenant, scattered through its rows: scoring it
from the tenant's matrix gathers every one of its rows first (5 ms for 25k rows of a 500k-row
tenant here), where scoring a contiguous copy is one pass. Every node's copy grows with each
batch embedded, so no search waits for one to be gathered; the price is the tenant's vectors
held twice. A saved tenant keeps the copies node after node in one file, which a reopened one
maps, so a node's copy is read in one sequential run the first time it is searched. Rows
removed later stay in the copies; the caller filters them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from memeval.engines.reference import kernel as reference_kernel


class _Block:
    """One node's documents (increasing) and their vectors, with room to grow."""

    def __init__(self, docs: Any, vecs: Any) -> None:
        self.size = len(docs)
        self.docs, self.vecs = docs, vecs

    def extend(self, docs: Any, vecs: Any) -> None:
        end = self.size + len(docs)
        if end > len(self.docs):
            # Small first: a tenant may hold thousands of one-document nodes. A reopened copy
            # is a read-only view of the saved file until it first grows.
            capacity = max(end, 2 * len(self.docs), 8)
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

    def scores(self, nodes: Iterable[int], query: Any) -> tuple[Any, Any]:
        """The documents of ``nodes`` and their dot products with ``query``, node by node."""
        docs, sims = [], []
        for held, vecs in self._held(nodes):
            docs.append(held)
            sims.append(np.einsum("ij,j->i", vecs, query))
        if not docs:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        return np.concatenate(docs), np.concatenate(sims)

    def best(self, nodes: Iterable[int], query: Any, codes: Any, floor: float, k: int) -> tuple[Any, Any]:
        """Up to ``k`` documents of each of ``nodes`` most similar to ``query`` (live ones,
        ``codes[doc]`` positive, at or above ``floor``) and their similarities, in compiled code
        (:func:`memeval.engines.reference.compiled_loops.nearest`): what :meth:`scores` then picking them
        gives, but for the last float32 bit of a similarity."""
        docs, sims = [], []
        nearest = reference_kernel.loops().nearest
        for held, vecs in self._held(nodes):
            found, similar = nearest(vecs, held, codes, query, float(floor), k)
            docs.append(found)
            sims.append(similar)
        if not docs:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        return np.concatenate(docs), np.concatenate(sims)

    def _held(self, nodes: Iterable[int]) -> Iterator[tuple[Any, Any]]:
        """The documents and vectors of each of ``nodes`` that holds any."""
        for node in nodes:
            block = self._blocks.get(node)
            if block is not None and block.size:
                yield block.docs[: block.size], block.vecs[: block.size]

    def extend(self, first: int, codes: Any, vecs: Any) -> None:
        """Add rows ``first``, ``first + 1``, ... (``vecs``) to their nodes' copies; ``codes``
        holds each row's node + 1 (0 for a removed row, which is left out)."""
        if not len(codes):
            return
        order = np.argsort(codes, kind="stable")
        ordered = np.take(codes, order)
        cuts = [0, *(np.flatnonzero(ordered[1:] != ordered[:-1]) + 1).tolist(), len(ordered)]
        for start, end in zip(cuts, cuts[1:]):
            code = int(ordered[start])
            if not code:
                continue
            block = self._blocks.get(code - 1)
            if block is None:
                empty = np.zeros((0, vecs.shape[1]), dtype=np.float32)
                block = self._blocks[code - 1] = _Block(np.zeros(0, dtype=np.int64), empty)
            rows = order[start:end]
            block.extend(rows + first, np.take(vecs, rows, axis=0))

    def save(self, folder: Path) -> None:
        """Write the copies under ``folder``, node after node (``blocks.npy``: node code,
        first row and row count per node; ``block-docs.npy``, ``block-vectors.npy``)."""
        codes = sorted(code for code, block in self._blocks.items() if block.size)
        sizes = [self._blocks[code].size for code in codes]
        starts = np.concatenate(([0], np.cumsum(sizes, dtype=np.int64)[:-1])) if codes else np.zeros(0, np.int64)
        np.save(folder / "blocks.npy", np.array([codes, starts, sizes], dtype=np.int64).reshape(3, len(codes)))
        dim = next((block.vecs.shape[1] for block in self._blocks.values()), 1)
        np.save(folder / "block-docs.npy", np.concatenate(
            [self._blocks[code].docs[: self._blocks[code].size] for code in codes] or [np.zeros(0, np.int64)]))
        np.save(folder / "block-vectors.npy", np.concatenate(
            [self._blocks[code].vecs[: self._blocks[code].size] for code in codes] or [np.zeros((0, dim), np.float32)]))

    @classmethod
    def load(cls, folder: Path) -> NodeBlocks:
        """The copies :meth:`save` wrote under ``folder``, memory-mapped.

        Raises:
            OSError: a file is missing or unreadable.
            ValueError: the files do not fit together (a node's rows outside them).
        """
        blocks = cls()
        table = np.load(folder / "blocks.npy")
        docs = np.asarray(np.load(folder / "block-docs.npy", mmap_mode="r"))
        vecs = np.asarray(np.load(folder / "block-vectors.npy", mmap_mode="r"))
        if table.ndim != 2 or table.shape[0] != 3 or len(docs) != len(vecs) or vecs.ndim != 2 or (
                table.size and ((table[1] < 0) | (table[2] < 0) | (table[1] + table[2] > len(docs))).any()):
            raise ValueError(f"{folder}: blocks.npy does not match block-docs.npy and block-vectors.npy")
        for code, start, size in table.T.tolist():
            blocks._blocks[code] = _Block(docs[start : start + size], vecs[start : start + size])
        return blocks
