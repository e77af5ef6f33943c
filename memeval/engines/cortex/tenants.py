"""What a cortex adapter knows about each tenant without asking the server again.

Per tenant: the leaf scopes this process wrote to, the scopes the server listed (asked once,
and again when a caller wants a fresh listing), and the ``(scope, event id)`` each written item
became. All in memory, gone with the process; safe across threads (the server is never called
while the lock is held).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

Located = tuple[str, str]  # (leaf scope, event id)


class TenantBook:
    """The adapter's per-tenant knowledge; see the module docstring."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._written: dict[str, set[str]] = {}
        self._listed: dict[str, set[str]] = {}
        self._events: dict[str, dict[str, Located]] = {}

    def wrote(self, tenant: str, item_id: str, scope: str, event_id: str) -> None:
        """Record a write's receipt."""
        with self._lock:
            self._written.setdefault(tenant, set()).add(scope)
            self._events.setdefault(tenant, {})[item_id] = (scope, event_id)

    def scopes(self, tenant: str, listing: Callable[[], Iterable[str]], fresh: bool = False) -> list[str]:
        """The tenant's leaf scopes, sorted: those written to, plus ``listing()``, which is called
        the first time the tenant is asked for, and again when ``fresh``."""
        with self._lock:
            listed = None if fresh else self._listed.get(tenant)
        if listed is None:
            listed = set(listing())
            with self._lock:
                self._listed[tenant] = listed
        with self._lock:
            return sorted(listed | self._written.get(tenant, set()))

    def located(self, tenant: str, ids: Iterable[str]) -> dict[str, Located]:
        """Where each of ``ids`` this process wrote (and did not forget) is, by item id."""
        with self._lock:
            events = self._events.get(tenant, {})
            return {i: events[i] for i in ids if i in events}

    def forgot(self, tenant: str, ids: Iterable[str]) -> None:
        """Drop the receipts of forgotten items."""
        with self._lock:
            events = self._events.get(tenant, {})
            for item_id in ids:
                events.pop(item_id, None)

    def erased(self, tenant: str) -> None:
        """Drop everything known about an erased tenant."""
        with self._lock:
            self._written.pop(tenant, None)
            self._listed.pop(tenant, None)
            self._events.pop(tenant, None)
