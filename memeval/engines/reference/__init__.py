"""The embedded reference engine (:mod:`.engine`) and its own search engine: a BM25 index
(:mod:`.index`, :mod:`.search`, :mod:`.postings`, :mod:`.split`, compiled kernels in
:mod:`.kernel` and :mod:`.compiled_loops`), dense vectors (:mod:`.embedders`, :mod:`.static_vectors`,
:mod:`.dense_blocks`, :mod:`.ann`), ranking (:mod:`.rank`, :mod:`.signals`) and storage (:mod:`.store`,
:mod:`.columns`, :mod:`.disk`).

Only this package imports its modules; others use the names below (the ``memeval.engines``
entry point ``reference`` is ``memeval.engines.reference:ADAPTER``)."""

from __future__ import annotations

from memeval.engines.reference.embedders import DenseIndex, QueryVectors, load_embedder
from memeval.engines.reference.engine import ADAPTER, MIN_DEPTH, ReferenceEngine, create

__all__ = ["ADAPTER", "MIN_DEPTH", "DenseIndex", "QueryVectors", "ReferenceEngine", "create", "load_embedder"]
