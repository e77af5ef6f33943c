"""Newest-first listing for adapters that keep their own order: recency keys and cursor pages.

An item's recency key sorts by ``at`` and then by write order, every undated item below every
dated one, so ``page`` can hand out a key as its cursor and resume strictly below it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
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
