"""The naive retrieval floor every memory paper compares against: embed everything, return top-k.

Every turn, document and learning is cut into chunks of at most ``chunk_words`` words (default
100; consecutive chunks share ``chunk_overlap`` words, default 20), and each chunk, after its
item's title if it has one, is embedded with the reference engine's embedder
(:func:`memeval.engines.reference.embedders.load_embedder`, the static model of the ``embeddings`` extra,
which this engine requires) and kept in a brute-force cosine
index (:class:`memeval.engines.reference.embedders.DenseIndex`). A recall returns the ``limit`` chunks most
similar to the query inside the requested nodes, best first by cosine: no extraction, no
lexical signal, no recency, no similarity floor (``prefer_recent`` is ignored on purpose). So
the reference engine and this one differ only in what memory adds on top of retrieval.

A hit's item is the stored item with ``text`` replaced by the matching chunk when the item was
cut into more than one chunk, so one long document can give several hits sharing its id.
``query=None`` lists the nodes newest first. Tenants are separate indexes; writes are
idempotent by item id and visible at once. Capabilities: ``forget``, ``erase``.
"""

from __future__ import annotations

import dataclasses
import threading
from itertools import islice
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import memeval
from memeval.engines.base import Adapter, EngineInfo, Hit, ListPage, MemoryItem, RecallRequest, WriteReceipt, capabilities_of, node_matches
from memeval.engines.reference import DenseIndex, QueryVectors, load_embedder
from memeval.engines.listing import ItemLog, newest_page
from memeval.errors import UsageError
from memeval.util.suggest import did_you_mean

DEFAULT_CHUNK_WORDS = 100
DEFAULT_OVERLAP = 20
NO_FLOOR = -1.0
_SETTINGS = ("chunk_words", "chunk_overlap")
T = TypeVar("T")


def create(settings: Mapping[str, Any]) -> RagBaseline:
    """The ``rag-baseline`` entry point.

    Raises:
        UsageError: an unknown setting, an invalid chunk size, or the ``embeddings`` extra missing.
    """
    for key in settings:
        if key not in _SETTINGS:
            raise UsageError(f"rag-baseline engine: unknown setting {key!r}{did_you_mean(key, _SETTINGS)}")
    words = settings.get("chunk_words", DEFAULT_CHUNK_WORDS)
    overlap = settings.get("chunk_overlap", DEFAULT_OVERLAP)
    for name, value, low in (("chunk_words", words, 1), ("chunk_overlap", overlap, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise UsageError(f"rag-baseline engine: {name} must be an integer >= {low}, not {value!r}")
    if overlap >= words:
        raise UsageError(f"rag-baseline engine: chunk_overlap ({overlap}) must be below chunk_words ({words})")
    try:
        embedder = load_embedder("static")
    except UsageError as err:
        raise UsageError("rag-baseline engine: needs the embeddings extra: pip install 'memeval-harness[embeddings]'") from err
    return RagBaseline(QueryVectors(embedder), words, overlap)  # type: ignore[arg-type]


def chunks(text: str, words: int, overlap: int) -> list[str]:
    """``text`` cut into windows of at most ``words`` words, each starting ``words - overlap``
    words after the previous one; a text that fits is one chunk, unchanged (an empty text too)."""
    tokens = text.split()
    if len(tokens) <= words:
        return [text]
    step = words - overlap
    starts = range(0, len(tokens) - overlap, step)
    return [" ".join(tokens[start : start + words]) for start in starts]


class _Tenant:
    """One tenant: its accepted items, their chunks in a dense index, and node codes."""

    def __init__(self, queries: QueryVectors) -> None:
        self.dense = DenseIndex(queries, NO_FLOOR)
        self.log = ItemLog()
        self.docs: dict[str, tuple[int, ...]] = {}  # item id -> its chunk documents
        self.chunks: list[tuple[str, str | None]] = []  # per chunk document: item id, chunk text when cut
        self.codes: dict[str, int] = {}

    def write(self, item: MemoryItem, words: int, overlap: int) -> WriteReceipt:
        if item.id in self.log:
            return WriteReceipt(item.id, replayed=True)
        self.log.add(item)
        code = self.codes.setdefault(item.node, len(self.codes))
        parts = chunks(item.text, words, overlap)
        first = len(self.chunks)
        for part in parts:
            self.dense.add(len(self.chunks), code, part if item.title is None else f"{item.title}\n{part}")
            self.chunks.append((item.id, part if len(parts) > 1 else None))
        self.docs[item.id] = tuple(range(first, len(self.chunks)))
        return WriteReceipt(item.id)

    def hit(self, doc: int, score: float) -> Hit:
        item_id, part = self.chunks[doc]
        item = self.log.get(item_id)
        return Hit(item if part is None else dataclasses.replace(item, text=part), score)

    def forget(self, ids: tuple[str, ...]) -> int:
        gone = self.log.remove(ids)
        self.dense.remove([doc for item_id in gone for doc in self.docs.pop(item_id)])
        return len(gone)


class RagBaseline:
    """In-memory top-k cosine retrieval implementing the engine contract; safe across threads."""

    def __init__(self, queries: QueryVectors, chunk_words: int, chunk_overlap: int) -> None:
        """Prefer :func:`create`."""
        self._queries = queries
        self._words = chunk_words
        self._overlap = chunk_overlap
        self._tenants: dict[str, _Tenant] = {}
        self._lock = threading.Lock()

    def info(self) -> EngineInfo:
        """Name, version, capabilities and the ranking in use."""
        settings = {"ranking": f"dense({self._queries.embedder.name}) top-k", "embedder": self._queries.embedder.name,
                    "chunk_words": self._words, "chunk_overlap": self._overlap}
        return EngineInfo("rag-baseline", memeval.__version__, capabilities_of(self), settings=settings)

    def write(self, item: MemoryItem) -> WriteReceipt:
        """Chunk and queue ``item`` for embedding, visible at once; a second write of the same
        id is a replay that stores nothing.

        Raises:
            EngineError: ``item.at`` is not a timestamp.
        """
        with self._lock:
            tenant = self._tenants.get(item.tenant)
            if tenant is None:
                tenant = self._tenants[item.tenant] = _Tenant(self._queries)
            return tenant.write(item, self._words, self._overlap)

    def page(self, tenant: str, cursor: str | None = None, limit: int = 100) -> ListPage:
        """A page of ``tenant``, newest first by ``at`` (undated items last, newest written first).

        Raises:
            EngineError: ``limit`` below 1 or a cursor this engine did not hand out.
        """
        return self._in(tenant, lambda store: store.log.page(cursor, limit), lambda: newest_page([], cursor, limit))


    def recall(self, request: RecallRequest) -> list[Hit]:
        """At most ``request.limit`` chunk hits in the requested nodes, best cosine first (ties:
        the older chunk first); ``query=None`` gives the newest items, scored ``1 / position``.

        Raises:
            EngineError: the embedder failed.
        """
        with self._lock:
            store = self._tenants.get(request.tenant)
            if store is None or request.limit <= 0:
                return []
            if request.query is None:
                newest = (item for item in store.log.newest() if node_matches(item.node, request.nodes))
                return [Hit(item, 1.0 / (i + 1)) for i, item in enumerate(islice(newest, request.limit))]
            codes = [code for name, code in store.codes.items() if node_matches(name, request.nodes)]
            found = store.dense.search(request.query, codes, request.limit) if codes else []
            return [store.hit(doc, score) for doc, score in found]

    def forget(self, tenant: str, ids: tuple[str, ...]) -> int:
        """Remove items (every chunk of each); returns how many items were removed."""
        return self._in(tenant, lambda store: store.forget(ids), lambda: 0)

    def erase(self, tenant: str) -> None:
        """Remove everything stored under ``tenant``."""
        with self._lock:
            self._tenants.pop(tenant, None)

    def close(self) -> None:
        """Drop every tenant."""
        with self._lock:
            self._tenants.clear()

    def _in(self, tenant: str, call: Callable[[_Tenant], T], absent: Callable[[], T]) -> T:
        """``call`` on the tenant's store under the lock, or ``absent()`` for an unknown tenant."""
        with self._lock:
            store = self._tenants.get(tenant)
            return call(store) if store else absent()


ADAPTER = Adapter(create, concurrent=True)
