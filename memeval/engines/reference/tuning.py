"""The reference engine's size thresholds and batch sizes, as one frozen value passed in.

Every engine uses :data:`DEFAULT`; the defaults were chosen by measurement
(``reports/reference-engine-benchmark.md``). Tests pass smaller values to take a large tenant's
paths (compiled kernels, pruned searches, several posting segments, an IVF index) with a few
hundred documents, instead of patching module globals.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tuning:
    """Thresholds in documents, postings or vectors; shares in [0, 1]."""

    compiled_docs: int = 50_000
    """A tenant of this many documents or more runs its searches and text signals in compiled
    code (with numba installed); below, numba's import and compilation cost more than it saves."""
    flush: int = 4096
    """Documents buffered before they are sealed into a posting segment."""
    one_segment: int = 16384
    """A tenant of at most this many postings keeps them in one segment."""
    direct: int = 32768
    """A query of at most this many postings is scored whole, not pruned (pruning would cost more)."""
    compiled_flat: int = 16
    """In a compiled tenant, a query is scored whole only when its postings are also at most this
    fraction (1/n) of the documents: above, one compiled pass over the tenant's score array costs
    less than sorting the postings for each section."""
    narrow: float = 0.125
    """A section holding less than this share of the tenant reads only its nodes' postings."""
    filter_after: float = 0.5
    """A section holding at least this share of the tenant filters candidates, not postings."""
    dense_share: int = 24
    """A search whose postings times this exceed the tenant's documents accumulates into one
    dense array."""
    probe_postings: int = 16384
    """The probe reads the rarest terms' postings up to this many, ..."""
    probe_docs: int = 1024
    """... and scores in full this many of their documents, those with the best partial scores."""
    lookup: int = 8
    """Looking a term up for one candidate costs about as much as adding this many postings."""
    ann_min: int = 20_000
    """A tenant of this many vectors or more searches them through an IVF index (with faiss)."""
    probe: int = 64
    """IVF lists an approximate search probes at least."""
    scan: int = 20_000
    """Vectors an approximate search scores at least (more lists while they are short)."""
    batch: int = 4096
    """Texts embedded in one batch."""
    leaders: int = 1024
    """Dense candidates kept for exact rescoring when a search reads every vector."""


DEFAULT = Tuning()
