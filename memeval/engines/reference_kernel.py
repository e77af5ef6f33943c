"""Exact BM25 over a large tenant in compiled code (numba), for the reference engine's lexical
index (:class:`memeval.engines.reference_index.LexicalIndex`).

With the ``fast`` extra (numba) installed, a tenant of :data:`MIN_DOCS` documents or more scores
a query by adding every posting of its terms into one array of every document's score
(:func:`accumulate`), then keeps a section's k best in one pass over that array (:func:`best`),
or reads the section's own documents out of it (:mod:`memeval.engines.reference_shared`). The
scores are the same BM25 shares summed in the query's term order, so the result is the
exhaustive scorer's: best first, equal scores oldest first.

numba is imported, and the kernels compiled (about a second, then cached on disk by numba), on
the first such search only, so small runs never pay for it.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from typing import Any

import numpy as np

from memeval.engines.reference_search import K1

# Smaller tenants stay on the numpy search: numba's import and compilation cost more than it saves.
MIN_DOCS = 50_000


@cache
def available() -> bool:
    """Whether numba is installed (the ``fast`` extra); looked up once per process."""
    return importlib.util.find_spec("numba") is not None


def compiles(size: int) -> bool:
    """Whether a tenant of ``size`` documents runs its searches and text signals in compiled
    code: :data:`MIN_DOCS` or more, numba installed."""
    return size >= MIN_DOCS and available()


def prepare() -> None:
    """Import numba and compile the kernels (or read numba's cached build) now rather than in the
    first large search (a benchmark keeps this out of what it times)."""
    _kernels()


def accumulate(starts: Any, docs: Any, tfs: Any, idfs: Any, norms: Any, acc: Any) -> None:
    """Add the BM25 shares of a query's postings into ``acc`` (float64, one per document).

    ``docs`` and ``tfs`` hold the terms' postings one term after another, term ``j`` at
    ``starts[j]:starts[j + 1]`` with idf ``idfs[j]``; ``norms`` is every document's length
    normalisation (see :func:`memeval.engines.reference_search.share`, whose order of operations
    this follows, so that the sums agree to the last bit).
    """
    _kernels()[0](starts, docs, tfs, idfs, norms, acc)


def best(acc: Any, node: Any, inside: Any, k: int, clear: bool) -> list[tuple[int, float]]:
    """The ``k`` best ``(doc, score)`` pairs of ``acc`` among documents whose ``node`` code is
    ``inside`` and whose score is positive, best first, equal scores oldest first; with
    ``clear``, ``acc`` is left zeroed (a fresh array costs its page faults, a millisecond at 500k
    documents)."""
    found, scores = _kernels()[1](acc, node, inside, k, clear)
    order = np.lexsort((found, -scores))
    return [(int(found[i]), float(scores[i])) for i in order]


@cache
def admit() -> Any:
    """The compiled step of a one-pass k-best selection (here and in
    :mod:`memeval.engines.dense_kernel`): ``admit(best, found, worst, score, doc)`` puts ``doc``
    and ``score`` in place of the worst kept one and returns the new worst's index. Callers admit
    a later document only with a strictly higher score than the worst, so equal scores keep the
    older document; the worst is the lowest score, the newest among equals."""
    import numba

    @numba.njit(cache=True, nogil=True)
    def step(best: Any, found: Any, worst: int, score: float, doc: int) -> int:
        best[worst] = score
        found[worst] = doc
        worst = 0
        for i in range(1, best.size):
            if best[i] < best[worst] or (best[i] == best[worst] and found[i] > found[worst]):
                worst = i
        return worst

    return step


@cache
def _kernels() -> tuple[Any, Any]:
    import numba

    step = admit()

    @numba.njit(cache=True, nogil=True)
    def add(starts: Any, docs: Any, tfs: Any, idfs: Any, norms: Any, acc: Any) -> None:
        for term in range(idfs.size):
            weight = idfs[term] * (K1 + 1)
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
                worst = step(best, found, worst, score, doc)
        held = found >= 0
        return found[held], best[held]

    return add, keep
