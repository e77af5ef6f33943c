"""Exact BM25 over a large tenant in compiled code (numba), for the reference engine's lexical
index (:class:`memeval.engines.reference.index.LexicalIndex`).

With the ``fast`` extra (numba) installed, a tenant of ``Tuning.compiled_docs`` documents or more scores
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

from memeval.engines.reference.tuning import Tuning
from memeval.engines.reference.search import K1



@cache
def available() -> bool:
    """Whether numba is installed (the ``fast`` extra); looked up once per process."""
    return importlib.util.find_spec("numba") is not None


def compiles(size: int, tuning: Tuning) -> bool:
    """Whether a tenant of ``size`` documents runs its searches and text signals in compiled
    code: ``tuning.compiled_docs`` or more, numba installed."""
    return size >= tuning.compiled_docs and available()


def prepare() -> None:
    """Import numba and compile the kernels (or read numba's cached build) now rather than in the
    first large search (a benchmark keeps this out of what it times)."""
    loops()


def accumulate(starts: Any, docs: Any, tfs: Any, idfs: Any, norms: Any, acc: Any) -> None:
    """Add the BM25 shares of a query's postings into ``acc`` (float64, one per document).

    ``docs`` and ``tfs`` hold the terms' postings one term after another, term ``j`` at
    ``starts[j]:starts[j + 1]`` with idf ``idfs[j]``; ``norms`` is every document's length
    normalisation (see :func:`memeval.engines.reference.search.share`, whose order of operations
    this follows, so that the sums agree to the last bit).
    """
    loops().accumulate(starts, docs, tfs, idfs, norms, K1, acc)


def best(acc: Any, node: Any, inside: Any, k: int, clear: bool) -> list[tuple[int, float]]:
    """The ``k`` best ``(doc, score)`` pairs of ``acc`` among documents whose ``node`` code is
    ``inside`` and whose score is positive, best first, equal scores oldest first; with
    ``clear``, ``acc`` is left zeroed (a fresh array costs its page faults, a millisecond at 500k
    documents)."""
    found, scores = loops().keep(acc, node, inside, k, clear)
    order = np.lexsort((found, -scores))
    return [(int(found[i]), float(scores[i])) for i in order]


@cache
def loops() -> Any:
    """:mod:`memeval.engines.reference.compiled_loops`, imported (numba with it) on first use."""
    from memeval.engines.reference import compiled_loops

    return compiled_loops
