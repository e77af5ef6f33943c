"""Optional dense retrieval for the reference engine: a local embedder and a vector index.

Everything here needs ``tokenlearn-static-model`` and numpy (core dependencies since the model
became part of the default install). :func:`load_embedder` is the only door, and with ``auto``
a model that cannot load simply means "no dense signal".

Vectors are embedded at write time in batches: a write queues its text, and the write that
fills a batch of 4,096 embeds it, so no search ever pays for a large backlog (a search embeds
the few texts still queued, under one batch).
"""

from __future__ import annotations

import os
from array import array
from collections import OrderedDict
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any, Protocol

from memeval.engines.reference.tuning import DEFAULT, Tuning
from memeval.engines.reference import kernel
from memeval.engines.reference.dense_blocks import NodeBlocks
from memeval.engines.reference.ann import AnnIndex, available
from memeval.engines.reference.static_files import cache_folder
from memeval.engines.reference.static_vectors import MAX_TOKENS, StaticVectors
from memeval.errors import EngineError, UsageError

EMBEDDER_CHOICES = ("auto", "none", "static")
_QUERY_CACHE = 64
ANN_FILE = "ann.faiss"
_SMALL_SHARE = 8
_ANN_SHARE = 4


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors, shape ``(len(texts), dim)``."""

    name: str

    def embed(self, texts: Sequence[str]) -> Any:
        """One numpy row per text; an empty text may give the zero vector."""


class StaticEmbedder:
    """``tokenlearn-static-model``: 64-d static (Model2Vec-style) vectors, composed word by word
    in numpy (:mod:`memeval.engines.reference.static_vectors`; the package's own encoder only for texts
    that are not plain ASCII, loaded on the first such text).

    Raises:
        ImportError: the package or numpy is not installed.
        OSError: the model files are missing from the installed package.
        ValueError: the model files are not in the format this reader knows.
    """

    name = "static-64d"

    def __init__(self) -> None:
        import static_model

        bundled = Path(static_model.__file__).resolve().parent / "model"
        self._model_dir = Path(static_model.ensure_model_ready(bundled))
        self._vectors = StaticVectors(self._model_dir, cache_folder(os.environ), self._native)

    def embed(self, texts: Sequence[str]) -> Any:
        """See :class:`Embedder`."""
        return self._vectors.embed(texts)

    def _native(self, texts: Sequence[str]) -> Any:
        """The package's encoder (its first call builds the tokenizer, about a second)."""
        import static_model

        return static_model.encode_batch(str(self._model_dir), list(texts), MAX_TOKENS)


def load_embedder(choice: str) -> Embedder | None:
    """The embedder a ``embedder:`` setting asks for, or None for plain BM25.

    ``auto`` uses the static model when it loads, else None; ``static`` requires it; ``none``
    never embeds.

    Raises:
        UsageError: an unknown choice, or ``static`` when the model cannot load.
    """
    if choice not in EMBEDDER_CHOICES:
        raise UsageError(f"reference engine: embedder must be one of {', '.join(EMBEDDER_CHOICES)}, not {choice!r}")
    if choice == "none":
        return None
    try:
        return StaticEmbedder()
    except (ImportError, OSError, ValueError) as err:
        if choice == "auto":
            return None
        hint = "pip install 'memeval-harness[embeddings]'"
        raise UsageError(f"reference engine: embedder 'static' needs {hint} ({err})") from err


class QueryVectors:
    """An embedder plus a small cache of query vectors (one pre_turn asks the same query 4 times)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._cache: OrderedDict[str, Any] = OrderedDict()

    def embed(self, texts: Sequence[str]) -> Any:
        """The embedder's vectors for ``texts``.

        Raises:
            EngineError: the embedder failed (any exception of a third-party model).
        """
        try:
            return self.embedder.embed(texts)
        except Exception as err:
            raise EngineError(f"embedder {self.embedder.name} failed: {err}") from err

    def vector(self, query: str) -> Any:
        """The query's vector, shape ``(dim,)``; raises like :meth:`embed`."""
        vec = self._cache.get(query)
        if vec is None:
            vec = self._cache[query] = self.embed([query])[0]
            if len(self._cache) > _QUERY_CACHE:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(query)
        return vec


class DenseIndex:
    """Cosine search over one tenant's documents, filtered by node code: exact over the rows of
    a few nodes, from an IVF index (:mod:`memeval.engines.reference.ann`, when installed) over
    most of a large tenant, else exact over every row.

    Documents are dense ids in write order (0, 1, 2, ...), as in the lexical index. Rows of
    removed documents stay but can never match. Not thread-safe: the engine serialises calls.
    """

    def __init__(self, queries: QueryVectors, min_similarity: float, tuning: Tuning = DEFAULT) -> None:
        """``min_similarity`` is the cosine below which a document is not a hit."""
        import numpy

        self._np = numpy
        self._tuning = tuning
        self._queries = queries
        self._floor = min_similarity
        self._pending: list[str] = []
        self._node = array("i")
        self._node_rows: dict[int, array[int]] = {}
        self._vecs: Any = None
        self._rows = 0
        self._codes: Any = numpy.zeros(0, dtype=numpy.int32)
        self._width = 1
        self._version = 0
        self._codes_version = -1
        self._sims: tuple[str, int, Any] | None = None
        self._leaders: tuple[str, int, Any, bool] | None = None
        self._ann: AnnIndex | None = None
        self._blocks = NodeBlocks()

    def __len__(self) -> int:
        """How many documents were added (embedded or still queued)."""
        return len(self._node)

    def add(self, doc: int, node: int, text: str) -> None:
        """Queue ``text`` as document ``doc``; see :meth:`add_many`."""
        self.add_many(doc, (node,), (text,))

    def add_many(self, first: int, nodes: Sequence[int], texts: Sequence[str]) -> None:
        """Queue ``texts`` as documents ``first``, ``first + 1``, ... in ``nodes`` (one each).

        Raises:
            ValueError: ``first`` is not the number of documents added so far.
        """
        if first != len(self._node):
            raise ValueError(f"document {first} out of order (expected {len(self._node)})")
        for doc, node in enumerate(nodes, first):
            rows = self._node_rows.get(node)
            if rows is None:
                rows = self._node_rows[node] = array("i")
                self._width = max(self._width, node + 2)
            rows.append(doc)
        self._node.extend([node + 1 for node in nodes])
        self._pending.extend(texts)
        self._version += 1
        if len(self._pending) >= self._tuning.batch:
            try:
                self._embed_pending(whole=True)
            except EngineError:
                # The writes themselves succeeded; the texts stay queued and the next search
                # retries them and reports the failure to the caller who can act on it.
                pass

    def save(self, folder: Path) -> None:
        """Embed what is queued, then write the vectors, node codes, per-node copies and ANN
        index under ``folder`` (created); :meth:`load` reads them back.

        Raises:
            EngineError: the embedder failed on the queued texts.
        """
        np = self._np
        self._embed_pending()
        folder.mkdir(parents=True, exist_ok=True)
        np.save(folder / "vectors.npy", self._vecs[: self._rows] if self._vecs is not None else np.zeros((0, 1), np.float32))
        np.save(folder / "nodes.npy", np.frombuffer(self._node.tobytes(), dtype=np.int32))
        if self._ann is not None:
            self._ann.save(folder / ANN_FILE)
        self._blocks.save(folder)

    @classmethod
    def load(cls, folder: Path, queries: QueryVectors, min_similarity: float, tuning: Tuning = DEFAULT) -> DenseIndex:
        """The index :meth:`save` wrote under ``folder`` (vectors memory-mapped until the next
        write grows them).

        Raises:
            OSError: a file is missing or unreadable.
        """
        import numpy

        index = cls(queries, min_similarity, tuning)
        vecs = numpy.asarray(numpy.load(folder / "vectors.npy", mmap_mode="r"))
        nodes = numpy.load(folder / "nodes.npy")
        index._node = array("i", nodes.tobytes())
        order = numpy.argsort(nodes, kind="stable")
        bounds = numpy.searchsorted(nodes[order], numpy.arange(1, int(nodes.max(initial=0)) + 2))
        for code, rows in enumerate(numpy.split(order.astype(numpy.int32), bounds[:-1])):
            if code and rows.size:
                index._node_rows[code - 1] = array("i", rows.tobytes())
        index._width = int(nodes.max(initial=0)) + 1
        index._rows = len(nodes)
        index._vecs = vecs if len(nodes) else None
        index._version = 1
        if (folder / "blocks.npy").exists():
            index._blocks = NodeBlocks.load(folder)
        elif len(nodes):  # saved before the copies were
            index._blocks.extend(0, nodes, vecs)
        if (folder / ANN_FILE).exists():
            index._ann = AnnIndex(vecs.shape[1], folder / ANN_FILE, tuning)
        return index

    def remove(self, docs: Collection[int]) -> None:
        """Make documents unmatchable; unknown ones are ignored."""
        for doc in docs:
            if 0 <= doc < len(self._node):
                self._node[doc] = 0
        self._version += 1

    def search(self, query: str, nodes: Collection[int], k: int) -> list[tuple[int, float]]:
        """The ``k`` most similar ``(doc, cosine)`` pairs in ``nodes`` at or above the floor.

        Best first; equal similarities keep the older document first.
        """
        np = self._np
        if k <= 0 or not nodes:
            return []
        self._flush()
        size = sum(len(self._node_rows.get(n, ())) for n in nodes)
        if size * _SMALL_SHARE <= self._rows:
            # A few nodes: score only their rows, from per-node copies (at 1M rows a full scan is
            # 20+ ms, and gathering 25k scattered rows 5 ms).
            vector = self._queries.vector(query)
            if kernel.compiles(self._rows, self._tuning):
                return self._best(*self._blocks.best(nodes, vector, self._codes, self._floor, k), k)
            docs, sims = self._blocks.scores(nodes, vector)
            live = self._codes[docs] > 0
            return self._best(docs[live], sims[live], k)
        lut = np.zeros(self._width, dtype=bool)
        lut[[n + 1 for n in nodes if 0 < n + 1 < self._width]] = True
        if self._ann is not None and self._rows >= self._tuning.ann_min:
            found = self._from_ann(query, lut, k)
            if found is not None:
                return found
        sims = self._similarities(query)
        leaders, complete = self._leading(query, sims)
        hits = leaders[lut[self._codes[leaders]]][:k]
        if hits.size < k and not complete:
            rows = np.flatnonzero(lut[self._codes])
            return self._best(rows, sims[rows], k)
        return [(int(doc), float(sims[doc])) for doc in hits]

    def _from_ann(self, query: str, lut: Any, k: int) -> list[tuple[int, float]] | None:
        """The ``k`` best live rows in the selected nodes among the ANN index's candidates, with
        their exact cosines (ties oldest first), or None when fewer than ``k`` of its candidates
        are in those nodes (the caller scans exactly)."""
        np = self._np
        vector = self._queries.vector(query)
        rows, _ = self._ann.search(vector, max(_ANN_SHARE * k, 64))  # type: ignore[union-attr]
        rows = rows[lut[self._codes[rows]]]
        sims = np.einsum("ij,j->i", self._vecs[rows], vector)
        keep = sims >= self._floor
        rows, sims = rows[keep], sims[keep]
        if rows.size < k:
            return None
        order = np.lexsort((rows, -sims))[:k]
        return [(int(doc), float(sim)) for doc, sim in zip(rows[order], sims[order], strict=True)]

    def _similarities(self, query: str) -> Any:
        """Cosine of every row with the query, cached until the next write or removal (a
        pre-turn's four recalls share one query)."""
        self._flush()
        cached = self._sims
        if cached is not None and cached[0] == query and cached[1] == self._version:
            return cached[2]
        # einsum rather than @: BLAS threads spin on a busy 2-core machine (p95 of 17 ms
        # measured for 50k rows) while this single-threaded loop stays near 0.8 ms.
        sims = self._np.einsum("ij,j->i", self._vecs[: self._rows], self._queries.vector(query))
        self._sims = (query, self._version, sims)
        return sims

    def _leading(self, query: str, sims: Any) -> tuple[Any, bool]:
        """The best live rows at or above the floor, best first, and whether they are all of
        them. Cached like the similarities: a large section finds its hits among these leaders
        without scanning every row again."""
        cached = self._leaders
        if cached is not None and cached[0] == query and cached[1] == self._version:
            return cached[2], cached[3]
        np = self._np
        leaders = self._tuning.leaders
        rows = np.arange(sims.size) if sims.size <= leaders else np.argpartition(sims, -leaders)[-leaders:]
        # Complete when no row at or above the floor was left out of the leaders.
        complete = rows.size == sims.size or bool(sims[rows].min() < self._floor)
        rows = rows[(sims[rows] >= self._floor) & (self._codes[rows] > 0)]
        leaders = rows[np.lexsort((rows, -sims[rows]))]
        self._leaders = (query, self._version, leaders, complete)
        return leaders, complete

    def _best(self, docs: Any, sims: Any, k: int) -> list[tuple[int, float]]:
        """Up to ``k`` of ``docs`` (with their ``sims``) at or above the floor, most similar
        first, ties oldest first."""
        np = self._np
        keep = sims >= self._floor
        docs, sims = docs[keep], sims[keep]
        if docs.size > k:
            top = np.argpartition(-sims, k - 1)[:k]
            docs, sims = docs[top], sims[top]
        order = np.lexsort((docs, -sims))
        return [(int(doc), float(sim)) for doc, sim in zip(docs[order], sims[order], strict=True)]

    def _flush(self) -> None:
        """Embed every queued text and refresh the node-code view.

        Raises:
            EngineError: the embedder failed; the texts not yet embedded stay queued.
        """
        self._embed_pending()
        if self._codes_version != self._version:
            self._codes = self._np.frombuffer(self._node.tobytes(), dtype=self._np.int32)
            self._codes_version = self._version

    def _embed_pending(self, whole: bool = False) -> None:
        """Embed the queued texts in batches of ``tuning.batch`` (with ``whole``, only full
        batches); raises like :meth:`_flush`."""
        while len(self._pending) >= (self._tuning.batch if whole else 1):
            batch = self._pending[: self._tuning.batch]
            vecs = self._queries.embed(batch)
            self._grow(self._rows + len(batch), vecs.shape[1])
            self._vecs[self._rows : self._rows + len(batch)] = vecs
            codes = self._np.frombuffer(self._node[self._rows : self._rows + len(batch)], dtype=self._np.int32)
            self._blocks.extend(self._rows, codes, vecs)
            if self._ann is not None:
                self._ann.add(self._rows, vecs)
            self._rows += len(batch)
            del self._pending[: len(batch)]
            if self._ann is None and self._rows >= self._tuning.ann_min and available():
                # Built once the index can be used: a smaller tenant never pays for inserts.
                self._ann = AnnIndex(vecs.shape[1], tuning=self._tuning)
                self._ann.add(0, self._vecs[: self._rows])

    def _grow(self, rows: int, dim: int) -> None:
        """Make room for ``rows`` vectors, doubling the capacity so appends stay amortised O(1)."""
        np = self._np
        if self._vecs is not None and self._vecs.shape[0] >= rows:
            return
        capacity = 0 if self._vecs is None else self._vecs.shape[0]
        grown = np.zeros((max(rows, 2 * capacity, 1024), dim), dtype=np.float32)
        if self._vecs is not None:
            grown[: self._rows] = self._vecs[: self._rows]
        self._vecs = grown
