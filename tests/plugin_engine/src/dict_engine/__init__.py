"""A memeval engine from outside memeval: each tenant a dict, recall by shared words.

It imports only the public engine boundary (``memeval.engines.base``) and registers itself
through its own ``memeval.engines`` entry point, as a third party's adapter would. It implements
the core and ``erase``; nothing else, so memeval reports every other capability unsupported.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import Any

from memeval.engines.base import (Adapter, EngineInfo, Hit, ListPage, MemoryItem, RecallRequest, WriteReceipt,
                                  capabilities_of, node_matches)
from memeval.errors import EngineError, UsageError

WORDS = re.compile(r"\w+")


def create(settings: Mapping[str, Any]) -> DictEngine:
    """The factory; this engine takes no settings."""
    if settings:
        raise UsageError(f"dict-memory takes no settings, not {sorted(settings)}")
    return DictEngine()


class DictEngine:
    """Items per tenant in write order; newest first means latest ``at``, then latest written."""

    def __init__(self) -> None:
        self._tenants: dict[str, dict[str, MemoryItem]] = {}
        self._lock = threading.Lock()

    def info(self) -> EngineInfo:
        return EngineInfo("dict-memory", "0.1.0", capabilities_of(self))

    def write(self, item: MemoryItem) -> WriteReceipt:
        with self._lock:
            store = self._tenants.setdefault(item.tenant, {})
            replayed = item.id in store
            store.setdefault(item.id, item)
        return WriteReceipt(item.id, replayed)

    def page(self, tenant: str, cursor: str | None = None, limit: int = 100) -> ListPage:
        if cursor is not None and not cursor.isdigit():
            raise EngineError(f"dict-memory: not a cursor of this engine: {cursor!r}")
        start, items = int(cursor or 0), self._newest(tenant)
        end = start + max(1, limit)
        return ListPage(tuple(items[start:end]), str(end) if end < len(items) else None)

    def recall(self, request: RecallRequest) -> list[Hit]:
        items = [i for i in self._newest(request.tenant) if node_matches(i.node, request.nodes)]
        if request.query is None:
            return [Hit(item, 1.0 / (n + 1)) for n, item in enumerate(items[:request.limit])]
        asked = set(WORDS.findall(request.query.lower()))
        scored = [(len(asked & set(WORDS.findall(i.text.lower()))), n, i) for n, i in enumerate(items)]
        ranked = sorted((s for s in scored if s[0]), key=lambda s: (-s[0], s[1]))
        return [Hit(item, float(score)) for score, _, item in ranked[:request.limit]]

    def forget(self, tenant: str, ids: tuple[str, ...]) -> int:
        with self._lock:
            store = self._tenants.get(tenant, {})
            return sum(store.pop(i, None) is not None for i in ids)

    def erase(self, tenant: str) -> None:
        with self._lock:
            self._tenants.pop(tenant, None)

    def close(self) -> None:
        with self._lock:
            self._tenants.clear()

    def _newest(self, tenant: str) -> list[MemoryItem]:
        with self._lock:
            written = list(self._tenants.get(tenant, {}).values())
        order = sorted(range(len(written)), key=lambda n: (written[n].at or "", n), reverse=True)
        return [written[n] for n in order]


ADAPTER = Adapter(create)
"""The ``dict-memory`` entry point."""
