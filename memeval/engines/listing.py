"""Newest-first listing for adapters that keep their own order: recency keys, cursor pages and
a per-tenant log of accepted items.

An item's recency key sorts by ``at`` and then by write order, every undated item below every
dated one, so a page can hand out a key as its cursor and resume strictly below it (a write
between pages never repeats or skips an item).
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from operator import itemgetter

from memeval.engines.base import ListPage, MemoryItem
from memeval.errors import EngineError

RecencyKey = tuple[int, float, int]


def recency_key(item: MemoryItem, seq: int) -> RecencyKey:
    """``(dated, seconds since the epoch, seq)``; a naive ``at`` counts as UTC.

    Raises:
        EngineError: ``item.at`` is not an ISO 8601 / RFC 3339 timestamp.
    """
    if item.at is None:
        return (0, 0.0, seq)
    try:
        when = datetime.fromisoformat(item.at)
    except ValueError:
        raise EngineError(f"item {item.id}: invalid timestamp {item.at!r}") from None
    return (1, (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp(), seq)


def newest_page(ascending: Sequence[tuple[RecencyKey, MemoryItem]], cursor: str | None, limit: int) -> ListPage:
    """One page, newest first, of the items below ``cursor`` (None: from the newest);
    ``ascending`` is sorted by key, oldest first.

    Raises:
        EngineError: ``limit`` below 1 or a cursor :func:`newest_page` did not hand out.
    """
    if limit < 1:
        raise EngineError(f"list limit must be at least 1, not {limit}")
    end = len(ascending) if cursor is None else bisect_left(ascending, _cursor_key(cursor), key=itemgetter(0))
    start = max(0, end - limit)
    page = tuple(item for _, item in reversed(ascending[start:end]))
    return ListPage(page, _cursor(ascending[start][0]) if start else None)


def _cursor(key: RecencyKey) -> str:
    return f"{key[0]}:{key[1]!r}:{key[2]}"


def _cursor_key(cursor: str) -> RecencyKey:
    try:
        dated, seconds, seq = cursor.split(":")
        return (int(dated), float(seconds), int(seq))
    except ValueError:
        raise EngineError(f"invalid list cursor {cursor!r}") from None


class ItemLog:
    """The items one tenant accepted, by id, listable newest first. Not thread-safe: the
    engine serialises calls."""

    def __init__(self) -> None:
        self._items: dict[str, tuple[RecencyKey, MemoryItem]] = {}
        self._seq = 0
        self._ascending: list[tuple[RecencyKey, MemoryItem]] | None = None

    def __contains__(self, item_id: str) -> bool:
        return item_id in self._items

    def get(self, item_id: str) -> MemoryItem:
        """The accepted item of that id. Raises KeyError."""
        return self._items[item_id][1]

    def add(self, item: MemoryItem) -> None:
        """Accept ``item`` (its id must be new).

        Raises:
            EngineError: ``item.at`` is not a timestamp.
        """
        self._items[item.id] = (recency_key(item, self._seq), item)
        self._seq += 1
        self._ascending = None

    def remove(self, ids: Iterable[str]) -> list[str]:
        """Drop items by id; returns the ids that were here, each once."""
        gone = [i for i in dict.fromkeys(ids) if self._items.pop(i, None) is not None]
        if gone:
            self._ascending = None
        return gone

    def page(self, cursor: str | None, limit: int) -> ListPage:
        """See :func:`newest_page`."""
        return newest_page(self._sorted(), cursor, limit)

    def newest(self) -> Iterator[MemoryItem]:
        """Every item, newest first."""
        return (item for _, item in reversed(self._sorted()))

    def _sorted(self) -> list[tuple[RecencyKey, MemoryItem]]:
        if self._ascending is None:
            self._ascending = sorted(self._items.values(), key=itemgetter(0))
        return self._ascending


class AcceptedListing:
    """The listing of an engine that cannot list what it stores (mem0 and Graphiti keep derived
    memories, not the items written): each tenant's :class:`ItemLog` of the items it accepted,
    paged newest first. The engine fills ``_logs`` under ``_lock`` as writes are accepted."""

    _logs: dict[str, ItemLog]
    _lock: threading.Lock

    def page(self, tenant: str, cursor: str | None = None, limit: int = 100) -> ListPage:
        """A page of the items accepted in ``tenant``, newest first by ``at`` then write order.

        Raises:
            EngineError: an invalid ``limit`` or cursor.
        """
        with self._lock:
            log = self._logs.get(tenant)
            return log.page(cursor, limit) if log else newest_page([], cursor, limit)
