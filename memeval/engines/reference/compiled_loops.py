"""The reference engine's compiled loops (numba), for its large tenants: BM25 accumulation and
k-best selection (:mod:`memeval.engines.reference.kernel`), the dense picks of a few nodes
(:func:`nearest`, for :class:`memeval.engines.reference.dense_blocks.NodeBlocks`) and the text signals
(:mod:`memeval.engines.reference.signals`). Those modules document what the other loops compute;
:func:`memeval.engines.reference.kernel.loops` imports this one on first use, so importing numba
stays out of small runs.

Every loop is defined at module level, and so is every loop it calls. numba's on-disk cache keys
a function by its bytecode and, for a closure, by its captured values pickled; a compiled
function pickles differently in every process, so a loop that called another one defined in the
same enclosing function missed the cache in each new process and was compiled again (seconds on
a tenant's first search). Calls between module-level functions are resolved at compile time and
leave the key alone; the cache is invalidated when this file changes.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing of a needle's first three bytes


@numba.njit(cache=True, nogil=True)
def admit(best: Any, found: Any, worst: int, score: float, doc: int) -> int:
    """Put ``doc`` and ``score`` in place of the worst kept one and return the new worst's index.
    Callers admit a later document only with a strictly higher score than the worst, so equal
    scores keep the older document; the worst is the lowest score, the newest among equals."""
    best[worst] = score
    found[worst] = doc
    worst = 0
    for i in range(1, best.size):
        if best[i] < best[worst] or (best[i] == best[worst] and found[i] > found[worst]):
            worst = i
    return worst


@numba.njit(cache=True, nogil=True)
def accumulate(starts: Any, docs: Any, tfs: Any, idfs: Any, norms: Any, k1: float, acc: Any) -> None:
    for term in range(idfs.size):
        weight = idfs[term] * (k1 + 1)
        for at in range(starts[term], starts[term + 1]):
            doc = docs[at]
            tf = float(tfs[at])
            acc[doc] += weight * tf / (tf + norms[doc])


@numba.njit(cache=True, nogil=True)
def keep(acc: Any, node: Any, inside: Any, k: int, clear: bool) -> tuple[Any, Any]:
    # The k best in one pass over the documents, oldest first (see admit).
    best = np.zeros(k)
    found = np.full(k, -1, dtype=np.int64)
    worst = 0
    for doc in range(acc.size):
        score = acc[doc]
        if clear:
            acc[doc] = 0.0
        if score > best[worst] and inside[node[doc]]:
            worst = admit(best, found, worst, score, doc)
    held = found >= 0
    return found[held], best[held]


@numba.njit(cache=True, nogil=True, fastmath=True)
def _dot(row: Any, query: Any) -> Any:
    total = np.float32(0.0)
    for j in range(query.size):
        total += row[j] * query[j]
    return total


@numba.njit(cache=True, nogil=True)
def nearest(vecs: Any, docs: Any, codes: Any, query: Any, floor: float, k: int) -> tuple[Any, Any]:
    """Up to ``k`` of the rows ``vecs`` (documents ``docs``, increasing) most similar to
    ``query``: only live ones (``codes[doc]`` positive) at or above ``floor``; as documents and
    similarities (float64), in no order, equal similarities keeping the older document (one pass,
    as :func:`keep`'s). numpy would score a node's rows in one pass (``einsum``, 0.30 ms for 25k
    64-d rows here), then pick the live rows above the floor and sort the best (0.2 ms more); this
    loop does all of it, each dot product summed in SIMD lanes (so a cosine may differ from
    numpy's in its last float32 bit)."""
    best = np.full(k, -np.inf)
    found = np.full(k, -1, dtype=np.int64)
    worst = 0
    for i in range(docs.size):
        sim = float(_dot(vecs[i], query))
        if sim > best[worst] and sim >= floor and codes[docs[i]] > 0:
            worst = admit(best, found, worst, sim, docs[i])
    held = found >= 0
    return found[held], best[held]


@numba.njit(cache=True)
def _trigram(data: Any, at: int) -> Any:
    return (np.uint64(data[at]) << np.uint64(16)) | (np.uint64(data[at + 1]) << np.uint64(8)) | np.uint64(data[at + 2])


@numba.njit(cache=True)
def _same(buf: Any, at: int, ndl: Any, start: int, end: int) -> bool:
    for i in range(end - start):
        if buf[at + i] != ndl[start + i]:
            return False
    return True


@numba.njit(cache=True)
def signals(buf: Any, starts: Any, ndl: Any, nstarts: Any, stop: Any, stop_weight: float, total: float,
            probe_at: Any, probe_lo: Any, probe_hi: Any, probe_spare: Any, gram_words: int) -> Any:
    count = nstarts.size - 1
    # The needles by their first three bytes, in a small hash table: a text is read once,
    # each of its trigrams looked up, and only the needles starting with it compared.
    bits = 4
    while (1 << bits) < 4 * count:
        bits += 1
    mask, shift = (1 << bits) - 1, np.uint64(64 - bits)
    keys = np.zeros(1 << bits, dtype=np.uint64)
    heads = np.full(1 << bits, -1, dtype=np.int64)
    chain = np.full(count, -1, dtype=np.int64)
    short = []  # needles under three bytes, searched one by one
    for i in range(count):
        if nstarts[i + 1] - nstarts[i] < 3:
            short.append(i)
            continue
        key = _trigram(ndl, nstarts[i])
        slot = np.int64((key * _GOLDEN) >> shift)
        while heads[slot] >= 0 and keys[slot] != key:
            slot = (slot + 1) & mask
        keys[slot] = key
        chain[i] = heads[slot]
        heads[slot] = i
    docs = starts.size - 1
    out = np.zeros((docs, 2))
    held = np.zeros(count, dtype=np.bool_)
    for doc in range(docs):
        lo, hi = starts[doc], starts[doc + 1]
        held[:] = False
        for at in range(lo, hi - 2):
            key = _trigram(buf, at)
            slot = np.int64((key * _GOLDEN) >> shift)
            while heads[slot] >= 0 and keys[slot] != key:
                slot = (slot + 1) & mask
            i = heads[slot]
            while i >= 0:
                if not held[i] and nstarts[i + 1] - nstarts[i] <= hi - at and _same(buf, at, ndl, nstarts[i], nstarts[i + 1]):
                    held[i] = True
                i = chain[i]
        for i in short:
            for at in range(lo, hi - (nstarts[i + 1] - nstarts[i]) + 1):
                if _same(buf, at, ndl, nstarts[i], nstarts[i + 1]):
                    held[i] = True
                    break
        content, stops = 0, 0
        for i in range(stop.size):
            if held[i]:
                if stop[i]:
                    stops += 1
                else:
                    content += 1
        grams = 0.0
        for p in range(probe_at.size):
            if held[probe_at[p]]:
                grams += 1.0
                continue
            misses = 0
            for g in range(probe_lo[p], probe_hi[p]):
                if not held[g]:
                    misses += 1
            if misses <= probe_spare[p]:
                grams += 1.0 - misses / (probe_hi[p] - probe_lo[p])
        out[doc, 0] = min(1.0, (content + stop_weight * stops) / total)
        out[doc, 1] = min(1.0, grams / gram_words)
    return out
