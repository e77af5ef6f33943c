"""The embedded reference engine: real retrieval in-process, with no network and no server.

Ranking, per recall: the best BM25 candidates over title + text
(:mod:`memeval.engines.reference.index`, query terms OR-ed, the node filter applied inside the
index) and, with the embedding model (installed by default), the most similar by cosine
(:mod:`memeval.engines.reference.embedders`) form one pool, which :mod:`memeval.engines.reference.rank`
scores on word overlap with stopwords at low weight, character trigrams, BM25 and cosine, a
share of the best score in the candidate's thread, plus a bounded recency bonus with
``prefer_recent``. Each list holds max(limit, 24) candidates, and when the two hold fewer than
2 × limit, the ``limit`` newest items in the nodes join the pool too (scored on the same
signals), so packs fill their sections when the budget allows, with or without the dense
signal. When no candidate holds 80% of the question's words, a second pass adds ``limit`` more
from BM25 and cosine for the question joined with the first pass's best candidate
(pseudo-relevance feedback): one more embedding and two more searches.

``query=None`` lists the nodes newest first. Tenants are separate stores; writes are idempotent
by item id and visible at once. Capabilities (the protocols it implements): ``forget``,
``erase``, ``beliefs``, ``inspect``.

Settings: ``embedder`` (``auto`` | ``none`` | ``static``, default ``auto``), ``min_similarity``
(cosine below which a dense candidate is dropped, default -1: none is) and ``path`` (a folder
where the tenants are saved on ``close`` and reopened by the next engine; default none: memory
only). BM25 is always exact.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import memeval
from memeval.engines.reference.tuning import DEFAULT, Tuning
from memeval.engines.base import (
    Adapter,
    BuildReceipt,
    Derived,
    EngineInfo,
    Hit,
    ListPage,
    MemoryItem,
    RecallRequest,
    WriteReceipt,
    capabilities_of,
)
from memeval.engines.reference.embedders import DenseIndex, QueryVectors, load_embedder
from memeval.engines.reference.disk import folder_of, open_tenants, save_tenants
from memeval.engines.reference.index import LexicalIndex
from memeval.text.analyze import analyze
from memeval.engines.reference.rank import Candidates, feedback_terms, fuse, rank
from memeval.engines.reference.store import TenantStore, cursor_key, is_dated
from memeval.errors import EngineError, UsageError
from memeval.util.suggest import did_you_mean

MIN_DEPTH = 24
# Feedback runs only when no candidate holds this share of the question's words: a question
# asked in the words of its answer needs none.
FEEDBACK_BELOW = 0.8
# Supersession is tested among the first max(limit, MIN_SPAN) of a ranked list.
MIN_SPAN = 12
DEFAULT_MIN_SIMILARITY = -1.0
_SETTINGS = ("embedder", "min_similarity", "path")


def create(settings: Mapping[str, Any], tuning: Tuning = DEFAULT) -> ReferenceEngine:
    """The factory of the ``reference`` adapter; ``tuning`` (:mod:`.tuning`) is for tests only.

    Raises:
        UsageError: an unknown setting or an invalid value (see the module docstring).
    """
    for key in settings:
        if key not in _SETTINGS:
            raise UsageError(f"reference engine: unknown setting {key!r}{did_you_mean(key, _SETTINGS)}")
    similarity = settings.get("min_similarity", DEFAULT_MIN_SIMILARITY)
    if isinstance(similarity, bool) or not isinstance(similarity, (int, float)) or not -1 <= similarity <= 1:
        raise UsageError(f"reference engine: min_similarity must be a number in [-1, 1], not {similarity!r}")
    path = settings.get("path")
    if path is not None and (not isinstance(path, str) or not path):
        raise UsageError(f"reference engine: path must be a folder name, not {path!r}")
    embedder = load_embedder(str(settings.get("embedder", "auto")))
    return ReferenceEngine(QueryVectors(embedder) if embedder else None, float(similarity),
                           Path(path).expanduser() if path else None, tuning)


class ReferenceEngine:
    """In-memory engine implementing :class:`memeval.engines.base.Engine`; safe across threads."""

    def __init__(self, queries: QueryVectors | None, min_similarity: float, path: Path | None = None,
                 tuning: Tuning = DEFAULT) -> None:
        """Prefer :func:`create`; ``queries`` None means BM25 without a dense signal; with
        ``path``, the tenants saved there are opened now and :meth:`close` saves them back.

        Raises:
            EngineError: a tenant saved under ``path`` cannot be read.
        """
        self._queries = queries
        self._min_similarity = min_similarity
        self._path = path
        self._tuning = tuning
        self._tenants: dict[str, TenantStore] = open_tenants(path, queries, min_similarity, tuning) if path else {}
        self._lock = threading.Lock()

    def info(self) -> EngineInfo:
        """Name, version, capabilities and the ranking in use."""
        embedder = self._queries.embedder.name if self._queries else "none"
        ranking = f"bm25+dense({embedder})+recency" if self._queries else "bm25+recency"
        settings: dict[str, object] = {"ranking": ranking, "embedder": embedder}
        if self._queries:
            settings["min_similarity"] = self._min_similarity
        return EngineInfo("reference", memeval.__version__, capabilities_of(self), settings=settings)

    def write(self, item: MemoryItem) -> WriteReceipt:
        """Store ``item``, visible at once; a second write of the same id is a replay.

        Raises:
            EngineError: ``item.at`` is not a timestamp.
        """
        return self.write_many([item])[0]

    def write_many(self, items: Sequence[MemoryItem]) -> list[WriteReceipt]:
        """Store ``items`` in order under one lock (:class:`~memeval.engines.base.WritesBatch`).

        Raises:
            EngineError: an item's ``at`` is not a timestamp (the items before it are stored).
        """
        with self._lock:
            receipts: list[WriteReceipt] = []
            touched: dict[str, TenantStore] = {}
            try:
                for item in items:
                    tenant = touched.get(item.tenant)
                    if tenant is None:
                        tenant = touched[item.tenant] = self._tenant(item.tenant)
                    receipts.append(tenant.admit(item))
            finally:
                # Each tenant's share is indexed once, however the batch interleaves tenants.
                for tenant in touched.values():
                    tenant.flush()
            return receipts

    def page(self, tenant: str, cursor: str | None = None, limit: int = 100) -> ListPage:
        """A page of ``tenant``, newest first by ``at`` (undated items last, newest written first).

        Raises:
            EngineError: ``limit`` below 1 or a cursor this engine did not hand out.
        """
        if limit < 1:
            raise EngineError(f"page limit must be at least 1, not {limit}")
        after = None if cursor is None else cursor_key(cursor)
        with self._lock:
            store = self._tenants.get(tenant)
            return store.page(after, limit) if store else ListPage(())

    def recall(self, request: RecallRequest) -> list[Hit]:
        """At most ``request.limit`` hits in the requested nodes, best first.

        Scores: the fused score (see the module docstring), and ``1 / position`` for
        ``query=None``. A query of only stopwords or punctuation matches nothing in BM25 but
        still ranks the pool by its other signals; never raises on any query text.
        """
        with self._lock:
            store = self._tenants.get(request.tenant)
            codes = store.codes_for(tuple(request.nodes)) if store else ()
            if store is None or not codes or request.limit <= 0:
                return []
            if request.query is None:
                docs = store.newest(codes, request.limit)
                return [Hit(store.items[doc], 1.0 / (i + 1)) for i, doc in enumerate(docs)]  # type: ignore[arg-type]
            depth = max(request.limit, MIN_DEPTH)
            terms = analyze(request.query)
            found = _candidates(store, request.query, terms, codes, depth, request.limit)
            keys = store.keys if request.prefer_recent else None
            span = max(request.limit, MIN_SPAN)
            asked = store.texts.query(request.query)
            scores = fuse(asked, found, store.texts, store.threads)
            if scores and asked.held(scores, store.texts) < FEEDBACK_BELOW:
                best = min(scores, key=lambda doc: (-scores[doc], doc))
                found = _with_feedback(store, request.query, terms, codes, request.limit, found, best)
                scores = fuse(asked, found, store.texts, store.threads)
            ranked = rank(asked, scores, store.texts, keys, is_dated, span)
            return [Hit(store.items[doc], score) for doc, score in ranked[: request.limit]]  # type: ignore[arg-type]

    def forget(self, tenant: str, ids: tuple[str, ...]) -> int:
        """Remove items and the beliefs derived from them; returns how many items were removed."""
        with self._lock:
            store = self._tenants.get(tenant)
            return store.forget(ids) if store else 0

    def erase(self, tenant: str) -> None:
        """Remove everything stored under ``tenant``, beliefs included."""
        with self._lock:
            self._tenants.pop(tenant, None)
            if self._path is not None:
                shutil.rmtree(folder_of(self._path, tenant), ignore_errors=True)

    def build_beliefs(self, tenant: str) -> BuildReceipt:
        """One belief per document and per conversation thread, never duplicated."""
        with self._lock:
            store = self._tenants.get(tenant)
            return BuildReceipt(store.build_beliefs() if store else 0)

    def inspect(self, tenant: str) -> Derived:
        """The beliefs built so far (``subject states sentence``); no facts or conflicts."""
        with self._lock:
            store = self._tenants.get(tenant)
            return store.derived() if store else Derived()

    def close(self) -> None:
        """Drop every tenant, after saving the changed ones when the engine has a ``path``.

        Raises:
            EngineError: a tenant cannot be saved.
        """
        with self._lock:
            if self._path is not None:
                save_tenants(self._path, self._tenants)
            self._tenants.clear()

    def _tenant(self, name: str) -> TenantStore:
        """The store of tenant ``name``, made on its first write."""
        tenant = self._tenants.get(name)
        if tenant is None:
            tenant = self._tenants[name] = self._new_tenant()
        return tenant

    def _new_tenant(self) -> TenantStore:
        dense = DenseIndex(self._queries, self._min_similarity, self._tuning) if self._queries else None
        return TenantStore(LexicalIndex(self._tuning), dense)


def _candidates(store: TenantStore, query: str, terms: list[str], codes: tuple[int, ...], depth: int,
                limit: int) -> Candidates:
    """The BM25 (over ``terms``, ``query`` analyzed) and dense top ``depth`` for ``query``, and
    the ``limit`` newest items when the two lists hold fewer than 2 × ``limit`` (they only fill
    a short pool)."""
    lexical = store.lexical.search(terms, codes, depth)
    dense = store.dense.search(query, codes, depth) if store.dense else None
    short = len(lexical) + len(dense or ()) < 2 * limit
    return Candidates(lexical, dense, store.newest(codes, limit) if short else ())


def _with_feedback(store: TenantStore, query: str, terms: list[str], codes: tuple[int, ...], depth: int,
                   found: Candidates, best: int) -> Candidates:
    """``found`` with the BM25 and dense top ``depth`` for ``query`` (``terms`` analyzed) joined
    with ``best``'s text."""
    text = store.texts.raw(best)
    lexical = store.lexical.search(feedback_terms(terms, text), codes, depth)
    dense = store.dense.search(f"{query}\n{text}", codes, depth) if store.dense else None
    return replace(found, feedback_lexical=lexical, feedback_dense=dense)


ADAPTER = Adapter(create, concurrent=True)
"""The ``reference`` entry point."""
