"""Exact BM25 top k over a large tenant in compiled code (numba), for the reference engine's
lexical index (:class:`memeval.engines.reference_index.LexicalIndex`).

With the ``fast`` extra (numba) installed, a search over most of a tenant of :data:`MIN_DOCS`
documents or more (a team's conversations, say) scores every posting of the query's terms into
one array in a compiled loop and keeps the k best of the section in one pass over the documents:
the top 10 over a 507k-document tenant took 2.0 / 3.8 ms p50 / p95 in
``benchmarks/bench_reference.py``, where the numpy MaxScore search
(:mod:`memeval.engines.reference_search`) took 5.7 / 8.9 ms. A section of a few nodes stays on
the numpy search, which reads only the section's share of each posting list.
The scores are the same BM25 shares summed in the query's term order, so the result is the
exhaustive scorer's: best first, equal scores oldest first.

numba is imported, and the kernel compiled (about a second, then cached on disk by numba), on the
first such search only, so small runs never pay for it.
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


def prepare() -> None:
    """Import numba and compile the kernel (or read numba's cached build) now rather than in the
    first large search (a benchmark keeps this out of what it times)."""
    _kernel()


def top_k(starts: Any, docs: Any, tfs: Any, idfs: Any, norms: Any, node: Any, inside: Any, k: int,
          scratch: Any) -> list[tuple[int, float]]:
    """The ``k`` best ``(doc, score)`` pairs among documents whose ``node`` code is ``inside``,
    best first, equal scores oldest first.

    ``docs`` and ``tfs`` hold the query terms' postings one term after another, term ``j`` at
    ``starts[j]:starts[j + 1]`` with idf ``idfs[j]``; ``norms`` is every document's length
    normalisation (see :func:`memeval.engines.reference_search.share`). Meant for a section of
    most of the tenant: documents outside it are scored, then passed over. ``scratch`` is a
    float64 array of zeros, one per document, which the search uses and leaves zeroed (a fresh
    one costs its page faults, a millisecond at 500k documents).
    """
    found, scores = _kernel()(starts, docs, tfs, idfs, norms, node, inside, k, scratch[: norms.size])
    order = np.lexsort((found, -scores))
    return [(int(found[i]), float(scores[i])) for i in order]


@cache
def _kernel() -> Any:
    import numba

    @numba.njit(cache=True)
    def kernel(starts: Any, docs: Any, tfs: Any, idfs: Any, norms: Any, node: Any, inside: Any, k: int,
               acc: Any) -> tuple[Any, Any]:
        for term in range(idfs.size):
            weight = idfs[term] * (K1 + 1)
            for at in range(starts[term], starts[term + 1]):
                doc = docs[at]
                tf = float(tfs[at])
                # reference_search.share, in the same order of operations, so the sums agree
                acc[doc] += weight * tf / (tf + norms[doc])
        # The k best in one pass over the documents, oldest first: a later document replaces the
        # worst kept one only with a strictly higher score; the worst is the lowest score, the
        # newest among equals.
        best = np.zeros(k)
        found = np.full(k, -1, dtype=np.int64)
        worst = 0
        for doc in range(acc.size):
            score = acc[doc]
            acc[doc] = 0.0
            if score > best[worst] and inside[node[doc]]:
                best[worst] = score
                found[worst] = doc
                worst = 0
                for i in range(1, k):
                    if best[i] < best[worst] or (best[i] == best[worst] and found[i] > found[worst]):
                        worst = i
        keep = found >= 0
        return found[keep], best[keep]

    return kernel
