"""One tenant of the reference engine: its items, their order, node codes, indexes and beliefs.

Each item gets a dense document number in write order (its slot) and a recency key, an int
that sorts by ``at`` and then by write order, with every undated item below every dated one.
Keys stay unique because the low 32 bits are the slot.
"""

from __future__ import annotations

import heapq
import json
import re
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import astuple
from pathlib import Path
from datetime import UTC, datetime, timedelta
from itertools import islice

import numpy as np

from memeval.engines.reference.tuning import DEFAULT, Tuning
from memeval.engines.reference import columns as reference_columns
from memeval.engines.base import Belief, Derived, ListPage, MemoryItem, WriteReceipt, node_matches
from memeval.engines.reference.columns import StoredItems, indexed_text
from memeval.engines.reference.embedders import DenseIndex
from memeval.engines.reference.index import LexicalIndex
from memeval.engines.reference.rank import Texts
from memeval.errors import EngineError

_SLOT_BITS = 32
_SLOT_MASK = (1 << _SLOT_BITS) - 1
_DATED = 1 << 62
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
BELIEF_CHARS = 240
BELIEF_CONFIDENCE = 0.5


class TenantStore:
    """Everything one tenant holds. Not thread-safe: the engine serialises calls."""

    def __init__(self, lexical: LexicalIndex, dense: DenseIndex | None, items: StoredItems | None = None) -> None:
        self.lexical = lexical
        self.dense = dense
        self.items = items if items is not None else StoredItems("")
        # Counts the changes since the store was built or loaded (a saved store unchanged since
        # it was opened needs no saving).
        self.changes = 0
        self.keys: list[int] = []
        self._ids: dict[str, int] = {}
        self._doc_code: list[int] = []
        self._codes: dict[str, int] = {}
        self._patterns: dict[tuple[str, ...], tuple[int, ...]] = {}
        self._order: list[int] = []
        self._order_sorted = True
        self._node_order: list[list[int]] = []
        self._node_unsorted: set[int] = set()
        self._beliefs: dict[str, tuple[Belief, str]] = {}
        self._scanned = 0
        self._queued_codes: list[int] = []
        self._queued_texts: list[str] = []
        self.texts = Texts(self.items.text, lambda: len(self.items), lexical.tuning)
        self._threads: array[int] | None = array("q") if items is None else None
        self._thread_codes: dict[str, int] = {}

    def admit(self, item: MemoryItem) -> WriteReceipt:
        """Store ``item`` unless its id is already here (then a replay that stores nothing):
        it gets the next document number, a recency key and its node's code, and waits for the
        indexes until :meth:`flush` (the engine flushes each tenant of a batch once, however the
        batch interleaves tenants).

        Raises:
            EngineError: ``item.at`` is not an ISO 8601 / RFC 3339 timestamp (nothing stored).
        """
        if item.id in self._ids:
            return WriteReceipt(item.id, replayed=True)
        doc = len(self.keys)
        key = doc if item.at is None else (_DATED + _micros(item)) << _SLOT_BITS | doc
        code = self._codes.get(item.node)
        if code is None:
            code = self._new_node(item.node)
        self.items.append(item)
        self.threads.append(self._thread_code(item.thread))
        self.keys.append(key)
        self._ids[item.id] = doc
        self._doc_code.append(code)
        order = self._order
        if order and key < order[-1]:
            self._order_sorted = False
        order.append(key)
        mine = self._node_order[code]
        if mine and key < mine[-1]:
            self._node_unsorted.add(code)
        mine.append(key)
        self._queued_codes.append(code)
        self._queued_texts.append(indexed_text(item.title, item.text))
        return WriteReceipt(item.id)

    def flush(self) -> None:
        """Hand the admitted items to the indexes, which make them visible to searches."""
        texts, codes = self._queued_texts, self._queued_codes
        if not texts:
            return
        self._queued_texts, self._queued_codes = [], []
        self.changes += 1
        first = len(self.items) - len(texts)
        self.lexical.add_many(first, codes, texts)
        if self.dense is not None:
            self.dense.add_many(first, codes, texts)

    def codes_for(self, patterns: tuple[str, ...]) -> tuple[int, ...]:
        """Codes of this tenant's nodes that match ``patterns`` (see ``node_matches``)."""
        codes = self._patterns.get(patterns)
        if codes is None:
            codes = tuple(c for name, c in self._codes.items() if node_matches(name, patterns))
            self._patterns[patterns] = codes
        return codes

    def newest(self, codes: Iterable[int], limit: int) -> list[int]:
        """The ``limit`` newest live documents in the given nodes, newest first."""
        lists = [self._sorted_node(code) for code in codes]
        merged = heapq.merge(*(reversed(keys) for keys in lists), reverse=True)
        return [key & _SLOT_MASK for key in islice(merged, limit)]

    def page(self, after: int | None, limit: int) -> ListPage:
        """One page of the listing, newest first, of items older than the key ``after``."""
        if not self._order_sorted:
            self._order.sort()
            self._order_sorted = True
        end = len(self._order) if after is None else bisect_left(self._order, after)
        start = max(0, end - limit)
        page = tuple(self.items[key & _SLOT_MASK] for key in reversed(self._order[start:end]))
        return ListPage(page, format(self._order[start], "x") if start else None)  # type: ignore[arg-type]

    def forget(self, ids: Iterable[str]) -> int:
        """Remove items by id and every belief derived from them; returns how many items went."""
        docs = {}
        for item_id in ids:
            doc = self._ids.pop(item_id, None)
            if doc is not None:
                docs[doc] = self._doc_code[doc]
                self.items[doc] = None
                self.threads[doc] = -1
        if not docs:
            return 0
        self.changes += 1
        self.texts.forget()
        self.lexical.remove(docs)
        if self.dense is not None:
            self.dense.remove(docs)
        gone = {self.keys[doc] for doc in docs}
        self._order = [key for key in self._order if key not in gone]
        for code in set(docs.values()):
            self._node_order[code] = [key for key in self._node_order[code] if key not in gone]
        self._beliefs = {key: made for key, made in self._beliefs.items() if made[1] in self._ids}
        self._scanned = 0
        return len(docs)

    def build_beliefs(self) -> int:
        """Add one belief per document and per thread not yet covered; returns how many were added.

        A document states the first sentence of its body; a thread, the first sentence of its
        first user turn (lowest turn index). Reply-only threads and empty texts yield none.
        """
        sources: dict[str, tuple[tuple[float, int], str, MemoryItem]] = {}
        for doc in range(self._scanned, len(self.items)):
            item = self.items[doc]
            if item is None:
                continue
            if item.kind == "document":
                sources[f"document:{item.id}"] = ((0, doc), item.title or item.node, item)
            elif item.kind == "turn" and item.thread is not None and item.role == "user":
                rank = (float("inf") if item.turn is None else item.turn, doc)
                key = f"thread:{item.thread}"
                if key not in sources or rank < sources[key][0]:
                    sources[key] = (rank, item.thread, item)
        self._scanned = len(self.items)
        built = 0
        for key, (_, subject, item) in sources.items():
            sentence = first_sentence(item.text)
            if key not in self._beliefs and sentence:
                belief = Belief(subject, "states", sentence, "supported", BELIEF_CONFIDENCE)
                self._beliefs[key] = (belief, item.id)
                built += 1
        self.changes += built
        return built

    def derived(self) -> Derived:
        """The beliefs built so far, in the order they were built."""
        return Derived(beliefs=tuple(belief for belief, _ in self._beliefs.values()))

    def save(self, folder: Path) -> None:
        """Write the whole tenant under ``folder`` (which must exist and be empty)."""
        reference_columns.save([self.items[doc] for doc in range(len(self.items))], folder)
        np.save(folder / "keys.npy", np.array([key >> _SLOT_BITS for key in self.keys], dtype=np.int64))
        np.save(folder / "codes.npy", np.array(self._doc_code, dtype=np.int32))
        beliefs = [[key, *astuple(belief), source] for key, (belief, source) in self._beliefs.items()]
        meta = {"nodes": list(self._codes), "beliefs": beliefs, "scanned": self._scanned}
        (folder / "store.json").write_text(json.dumps(meta), encoding="utf-8")
        self.lexical.save(folder / "lexical")
        if self.dense is not None:
            self.dense.save(folder / "dense")

    @classmethod
    def load(cls, folder: Path, tenant: str, dense: Callable[[Path], DenseIndex] | None,
             tuning: Tuning = DEFAULT) -> TenantStore:
        """The tenant :meth:`save` wrote under ``folder``; ``dense`` opens its vector index, or
        gives an empty one that the tenant's texts then fill (None: the engine has no dense
        signal).

        Raises:
            OSError: a file is missing or unreadable.
            ValueError: a file is not what :meth:`save` writes.
        """
        meta = json.loads((folder / "store.json").read_text(encoding="utf-8"))
        store = cls(LexicalIndex.load(folder / "lexical", tuning), dense(folder / "dense") if dense else None,
                    StoredItems(tenant, folder))
        high, codes = np.load(folder / "keys.npy"), np.load(folder / "codes.npy")
        live = ~store.items.removed
        store.keys = [(h << _SLOT_BITS) | doc for doc, h in enumerate(high.tolist())]
        store._doc_code = codes.tolist()
        store._ids = dict(zip(store.items.column("id"), range(len(high)), strict=True))
        store._ids.pop("", None)  # the removed rows
        for name in meta["nodes"]:
            store._new_node(name)
        order = np.lexsort((np.arange(len(high)), high))
        order = order[live[order]]
        keys = store.keys
        store._order = [keys[doc] for doc in order.tolist()]
        for code in range(len(store._node_order)):
            store._node_order[code] = [keys[doc] for doc in order[codes[order] == code].tolist()]
        for key, subject, predicate, obj, status, confidence, source in meta["beliefs"]:
            store._beliefs[key] = (Belief(subject, predicate, obj, status, confidence), source)
        store._scanned = meta["scanned"]
        if store.dense is not None and not len(store.dense) and len(store.items):
            # Saved without vectors, opened by an engine with an embedder: embed it now.
            store.dense.add_many(0, store._doc_code, [store.items.text(doc) for doc in range(len(store.items))])
            store.dense.remove([doc for doc in range(len(store.items)) if store.items[doc] is None])
        return store

    @property
    def threads(self) -> array[int]:
        """Each document's thread as a small code (-1: none, or removed), for the ranking's
        thread bonus, which looks up hundreds of candidates per recall; a reopened tenant reads
        its thread column on first use (most of a second at 1M turns), not when it opens."""
        if self._threads is None:
            self._threads = array("q", map(self._thread_code, self.items.optional_column("thread")))
        return self._threads

    def _thread_code(self, thread: str | None) -> int:
        if thread is None:
            return -1
        code = self._thread_codes.get(thread)
        if code is None:
            code = self._thread_codes[thread] = len(self._thread_codes)
        return code

    def _new_node(self, name: str) -> int:
        code = self._codes[name] = len(self._codes)
        self._node_order.append([])
        self._patterns.clear()
        return code

    def _sorted_node(self, code: int) -> list[int]:
        keys = self._node_order[code]
        if code in self._node_unsorted:
            keys.sort()
            self._node_unsorted.discard(code)
        return keys


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` with whitespace collapsed, at most 240 characters."""
    flat = " ".join(text.split())
    sentence = _SENTENCE_END.split(flat, 1)[0]
    if len(sentence) > BELIEF_CHARS:
        sentence = sentence[:BELIEF_CHARS].rsplit(" ", 1)[0] or sentence[:BELIEF_CHARS]
    return sentence


def _micros(item: MemoryItem) -> int:
    """``item.at`` in microseconds since the Unix epoch (a naive time counts as UTC)."""
    try:
        when = datetime.fromisoformat(item.at)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise EngineError(f"item {item.id}: invalid timestamp {item.at!r}") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return (when - _EPOCH) // _MICROSECOND


def is_dated(key: int) -> bool:
    """Whether a recency key belongs to an item with an ``at`` timestamp."""
    return key >> _SLOT_BITS >= _DATED


def cursor_key(cursor: str) -> int:
    """The recency key a list cursor stands for.

    Raises:
        EngineError: ``cursor`` is not one :meth:`TenantStore.page` handed out.
    """
    try:
        return int(cursor, 16)
    except ValueError:
        raise EngineError(f"invalid list cursor {cursor!r}") from None
