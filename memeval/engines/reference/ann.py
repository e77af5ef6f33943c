"""An approximate nearest-neighbour index for the reference engine's dense vectors (IVF, faiss).

Optional: with the ``ann`` extra (``pip install 'memeval-harness[ann]'``, the faiss-cpu wheel), once a
tenant holds ``Tuning.ann_min`` vectors (:mod:`.tuning`), k-means over them picks :data:`LISTS` centroids (faiss'
seeded clustering: the same vectors give the same index) and every vector goes into the inverted
list of its nearest centroid, as does every batch embedded after. Each vector is kept there as
8-bit codes of its offset from the centroid (faiss' scalar quantizer, a quarter of float32's
memory). A search over most of a tenant then scores the codes in the lists whose centroids are
nearest the query (``Tuning.probe`` of them, or as many as hold about ``Tuning.scan`` vectors when
that is more), instead of every row, and returns its best candidates with approximate cosines,
which the caller rescores from the exact vectors (:class:`memeval.engines.reference.embedders.DenseIndex`).
Without it, or below ``Tuning.ann_min`` rows, dense search stays exact.

An insert is one nearest-centroid search, about 170k vectors/s on this project's 2-core machine,
where an HNSW graph (usearch, this index before) inserted 3-6k/s at 300k-1M vectors and capped
ingest. At 500k vectors, 64 lists probed over 8-bit codes, then rescored, found the same share
of the exact top 10 (0.968) as over float32 vectors, in 0.38 ms where float32 took 0.60
(``benchmarks/bench_reference.py`` measures recall). Inner product over L2-normalised float32
vectors (cosine). faiss runs on one thread in this process (on a shared 2-core machine its
OpenMP pool oversubscribes the cores). An index saved before the codes (float32 lists) still
opens and answers.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

from memeval.engines.reference.tuning import DEFAULT, Tuning

LISTS = 1024
# k-means needs this many vectors per centroid; the default ann_min / LISTS is about 19.5.
_MIN_POINTS = 16
# k-means rounds: 10 train in 0.7 s what faiss' default 25 train in 1.7 s, at the same recall
# (0.960 against 0.958 at 200k vectors and 64 lists probed).
_ROUNDS = 10


@functools.cache
def available() -> bool:
    """Whether faiss is installed (then :class:`AnnIndex` can be built); asked once a process
    (every tenant asks, and a suite run makes hundreds)."""
    return importlib.util.find_spec("faiss") is not None


class AnnIndex:
    """Inverted lists over rows numbered 0, 1, 2, ... in the order they are added; the first
    :meth:`add` trains the centroids on its vectors (:data:`LISTS` of them, or one per 16
    vectors when it brings fewer than 16 x :data:`LISTS`).

    Raises:
        ImportError: faiss is not installed (check :func:`available` first).
    """

    def __init__(self, dim: int, path: Path | None = None, tuning: Tuning = DEFAULT) -> None:
        """A new, empty index for ``dim``-d vectors, or the one saved at ``path``."""
        import faiss
        import numpy

        faiss.omp_set_num_threads(1)
        self._faiss, self._np, self._dim = faiss, numpy, dim
        self._tuning = tuning
        self._index: Any = None
        if path is not None:
            self._index = faiss.read_index(str(path))

    def save(self, path: Path) -> None:
        """Write the index to ``path``."""
        if self._index is not None:
            self._faiss.write_index(self._index, str(path))

    def __len__(self) -> int:
        return 0 if self._index is None else int(self._index.ntotal)

    def add(self, start: int, vectors: Any) -> None:
        """Add ``vectors`` as rows ``start``, ``start + 1``, ... (``start`` is :func:`len`).

        Raises:
            ValueError: ``start`` is not the number of rows added so far, or the first batch
                holds fewer than 16 vectors (too few to train on).
        """
        if start != len(self):
            raise ValueError(f"row {start} out of order (expected {len(self)})")
        vectors = self._np.ascontiguousarray(vectors, dtype=self._np.float32)
        if self._index is None:
            self._index = self._trained(vectors)
        self._index.add(vectors)

    def _trained(self, vectors: Any) -> Any:
        """A new index with centroids trained on ``vectors``."""
        lists = min(LISTS, len(vectors) // _MIN_POINTS)
        if lists < 1:
            raise ValueError(f"training needs {_MIN_POINTS} vectors, not {len(vectors)}")
        faiss = self._faiss
        index = faiss.IndexIVFScalarQuantizer(faiss.IndexFlatIP(self._dim), self._dim, lists,
                                              faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
        index.cp.min_points_per_centroid = _MIN_POINTS
        index.cp.niter = _ROUNDS
        index.train(vectors)
        return index

    def search(self, vector: Any, count: int) -> tuple[Any, Any]:
        """About the ``count`` most similar rows, best first, and their cosines as the codes give
        them, within about 0.01 of the exact ones (fewer rows when the probed lists hold fewer)."""
        np = self._np
        if self._index is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        index = self._index
        index.nprobe = min(index.nlist, max(self._tuning.probe, -(-self._tuning.scan * index.nlist // max(index.ntotal, 1))))
        sims, rows = index.search(np.ascontiguousarray(vector, dtype=np.float32)[None, :], count)
        found = rows[0] >= 0
        return rows[0][found].astype(np.int64), sims[0][found]
