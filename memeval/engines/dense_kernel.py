"""The most similar rows of one node's dense vectors in compiled code (numba), for the reference
engine's searches within a few nodes of a large tenant
(:class:`memeval.engines.dense_blocks.NodeBlocks`).

numpy scores a node's copy in one pass (``einsum``, 0.30 ms for 25k 64-d rows here), then picks
the live rows at or above the floor and sorts the best (0.2 ms more). Here one compiled loop
does all of it: each row's dot product (summed in SIMD lanes, so a cosine may differ from
numpy's in its last float32 bit), the checks, and the k best kept as it goes.

With the ``fast`` extra, a tenant of :data:`memeval.engines.reference_kernel.MIN_DOCS` rows or
more searches its small sections here (numba is imported and the kernel compiled, or read from
numba's cache, on the first such search); smaller ones stay on numpy.
"""

from __future__ import annotations

from typing import Any

from memeval.engines import reference_kernel


def best(vecs: Any, docs: Any, codes: Any, query: Any, floor: float, k: int) -> tuple[Any, Any]:
    """Up to ``k`` of the rows ``vecs`` (documents ``docs``, increasing) most similar to
    ``query``: only live ones (``codes[doc]`` positive) at or above ``floor``; as documents and
    similarities (float64), in no order, equal similarities keeping the older document."""
    found, sims = reference_kernel.loops().nearest(vecs, docs, codes, query, float(floor), k)
    return found, sims
