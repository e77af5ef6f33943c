"""An approximate nearest-neighbour index for the reference engine's dense vectors (HNSW, usearch).

Optional: with the ``ann`` extra (``pip install 'memeval[ann]'``, the usearch wheel), once a
tenant holds :data:`ANN_MIN` vectors they go into an HNSW graph, and so does every batch embedded
after, and a search over most of a tenant reads its candidates from the graph instead of scoring
every row. Without it, or below :data:`ANN_MIN` rows, dense search stays exact. It stays an
extra: inserting a vector costs more than embedding it on this project's machines, and the
suites' tenants never reach :data:`ANN_MIN`. Cosine metric, float32, connectivity 16,
expansion 64 when adding and 256 when searching (recall of the exact top 10 is measured by
``benchmarks/bench_reference.py``).
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

ANN_MIN = 20_000
_CONNECTIVITY = 16
_EXPANSION_ADD = 64
_EXPANSION_SEARCH = 256


@functools.cache
def available() -> bool:
    """Whether usearch is installed (then :class:`AnnIndex` can be built); asked once a process
    (every tenant asks, and a suite run makes hundreds)."""
    return importlib.util.find_spec("usearch") is not None


class AnnIndex:
    """HNSW over rows numbered 0, 1, 2, ... in the order they are added.

    Raises:
        ImportError: usearch is not installed (check :func:`available` first).
    """

    def __init__(self, dim: int, path: Path | None = None) -> None:
        """A new, empty graph for ``dim``-d vectors, or the one saved at ``path``."""
        import numpy
        from usearch.index import Index

        self._np = numpy
        self._index = Index(ndim=dim, metric="cos", dtype="f32", connectivity=_CONNECTIVITY,
                            expansion_add=_EXPANSION_ADD, expansion_search=_EXPANSION_SEARCH)
        if path is not None:
            self._index.load(str(path))

    def save(self, path: Path) -> None:
        """Write the graph to ``path``."""
        self._index.save(str(path))

    def __len__(self) -> int:
        return len(self._index)

    def add(self, start: int, vectors: Any) -> None:
        """Add ``vectors`` as rows ``start``, ``start + 1``, ..."""
        keys = self._np.arange(start, start + len(vectors), dtype=self._np.uint64)
        # One thread: on a shared 2-core machine usearch's worker pool oversubscribes the cores.
        self._index.add(keys, vectors, threads=1)

    def search(self, vector: Any, count: int) -> tuple[Any, Any]:
        """About the ``count`` most similar rows, best first, and their cosines."""
        found = self._index.search(vector, count, threads=1)
        return found.keys.astype(self._np.int64), 1.0 - found.distances
