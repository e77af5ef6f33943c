"""The ``cortex`` engine: CortexDB over HTTP (``reference/cortexdb-wire.md``).

Configuration: ``settings.url`` or ``CORTEX_DB_URL``; the bearer key from ``CORTEX_DB_KEY``
(default ``tinymemory-cortex-test``), never from settings. Scope and event layout:
:mod:`memeval.engines.cortex.layout`; retries and error mapping: :mod:`memeval.engines.http_client`.

Behaviour worth knowing:

- writes are single appends without ``?wait``; their body carries a deterministic idempotency
  key, so a write whose outcome is unknown (timeout, 5xx, reset) is sent again: the server
  replays it and stores nothing. A 202 replay is ``WriteReceipt(replayed=True)``;
- listings are walked per leaf scope (every event comes twice: deduplicated by id, cursors
  followed, a repeated cursor is an error) and merged newest first; the adapter's own cursor is
  an offset into that merge, so each page walks the tenant again (fine for eval-sized tenants);
- recall reads every selected leaf scope (``granular``, events only, concurrently, at most
  ``concurrency`` at a time), scores the i-th hit of a scope ``1/(1+i)`` and merges;
- which scopes a tenant has: the ones this process wrote, plus ``v1/scopes/list`` under the
  tenant root (read once per tenant; again before an erasure), remembered in a
  :class:`~memeval.engines.cortex.tenants.TenantBook` with the write receipts;
- ``forget`` finds event ids from its own write receipts, else by ``tm:i:`` label, and forgets
  them with ``cascade: redact_events`` (events and everything derived from them);
- the flags ``v1/admin/version`` reports go into ``EngineInfo.flags`` (run.json) with the value
  of every secret-looking name (``…_KEY``, ``…_TOKEN``) and any copy of the key masked: a
  server started from memeval's environment may report the client's own key as a flag;
- ``answer`` builds a pack per scope, then asks with ``use_pack_id``; a 404 (pack expired, or
  dropped by any forget) rebuilds, at most three rounds.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from memeval import __version__
from memeval.engines.cortex import layout
from memeval.engines.base import (Adapter, BuildReceipt, Conflict, Derived, EngineInfo, Hit, ListPage, MemoryItem,
                                  RecallRequest, Usage, WriteReceipt, capabilities_of)
from memeval.engines.cortex.tenants import TenantBook
from memeval.engines.http_client import (HttpClient, HttpSettings, HttpStatusError, Retry, Secret, http_settings,
                                         masked)
from memeval.errors import EngineError
from memeval.util.interruptible import gather
from memeval.secrets import mask

URL_ENV, KEY_ENV, DEFAULT_KEY = "CORTEX_DB_URL", "CORTEX_DB_KEY", "tinymemory-cortex-test"
PAGE = 200
MAX_PAGES = 500
LABELS_PER_LOOKUP = 50
IDS_PER_FORGET = 100
ANSWER_ROUNDS = 3
DERIVED_LIMIT = 200
ERASURE_TIMEOUT_S = 300.0
ERASURE_POLL_S = 0.5
AUDIT_NOTE = "memeval cleanup"

T = TypeVar("T")
R = TypeVar("R")
Event = dict[str, Any]
Key = tuple[float, float]
Ranked = list[tuple[MemoryItem, Key]]
EventsByScope = dict[str, list[str]]
_UNKNOWN = object()


def create(settings: Mapping[str, Any]) -> "CortexEngine":
    """The factory of the ``cortex`` adapter. Raises UsageError for bad settings."""
    config = http_settings("cortex", settings, URL_ENV, os.environ)
    return CortexEngine(config, Secret(os.environ.get(KEY_ENV) or DEFAULT_KEY))


class CortexBase:
    """What every dialect of the CortexDB API offers: the core engine, ``erase`` and ``answer``.

    :class:`CortexEngine` adds what the admin and derived-layer routes give. Dialects override
    the class attributes and the ``_``-prefixed hooks (:meth:`_call`, :meth:`_append`,
    :meth:`_listed_scopes`, :meth:`_erase_scope`, :meth:`_forget_chunk`).
    """

    name = "cortex"
    key_env = KEY_ENV
    routes = {"experience": "v1/experience", "events": "v1/events", "recall": "v1/recall", "answer": "v1/answer",
              "forget": "v1/forget"}

    def __init__(self, settings: HttpSettings, key: Secret, decode: Callable[[Any], Any] = lambda body: body):
        self.settings = settings
        self.http = HttpClient(self.name, settings, key, self.key_env, decode)
        self._pool = ThreadPoolExecutor(max(1, settings.concurrency), thread_name_prefix=f"memeval-{self.name}")
        self._book = TenantBook()
        self._actor: Any = _UNKNOWN
        self._actor_lock = threading.Lock()
        self._info: EngineInfo | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.settings.public()['url']!r})"

    def info(self) -> EngineInfo:
        """Adapter identity; this dialect reports no server version or flags."""
        return EngineInfo(self.name, __version__, capabilities_of(self), settings=self.settings.public())

    def write(self, item: MemoryItem) -> WriteReceipt:
        """Append the item's event (accepted, not yet readable). Raises EngineError."""
        scope = layout.node_scope(item.tenant, item.node)
        receipt = self._append(layout.experience(item, scope), item)
        event_id = receipt.get("event_id")
        if not event_id:
            raise EngineError(f"{self.name} POST {self.routes['experience']}: the receipt has no event_id")
        self._book.wrote(item.tenant, item.id, scope, str(event_id))
        return WriteReceipt(item.id, replayed=bool(receipt.get("replayed_from_idempotency")))

    def page(self, tenant: str, cursor: str | None = None, limit: int = 100) -> ListPage:
        """A page of the tenant's items, newest first; ``cursor`` is an offset. Raises EngineError."""
        offset = _offset(cursor)
        items = [item for item, _ in self._newest(tenant, self._scopes(tenant), None)]
        end = offset + max(1, limit)
        return ListPage(tuple(items[offset:end]), str(end) if end < len(items) else None)

    def recall(self, request: RecallRequest) -> list[Hit]:
        """Hits over the selected scopes, best first; newest first when ``query`` is None."""
        scopes = layout.selected_scopes(request.tenant, self._scopes(request.tenant), request.nodes)
        if request.query is None:
            found = self._newest(request.tenant, scopes, request.limit)[:request.limit]
            return [Hit(item, 1.0 / (1 + rank)) for rank, (item, _) in enumerate(found)]
        query = request.query
        packs = self._each(scopes, lambda scope: self._pack_items(scope, request.tenant, query, request.limit))
        scored = [(1.0 / (1 + rank), key, order, item)
                  for order, pack in enumerate(packs) for rank, (item, key) in enumerate(pack)]
        scored.sort(key=lambda s: (-s[0], (-s[1][0], -s[1][1]) if request.prefer_recent else (), s[2]))
        hits: dict[str, Hit] = {}
        for score, _, _, item in scored:
            hits.setdefault(item.id, Hit(item, score))
        return list(hits.values())[:request.limit]

    def forget(self, tenant: str, ids: tuple[str, ...]) -> int:
        """Forget items and everything derived from them; the number of events deleted."""
        removed = 0
        for scope, events in self._locate(tenant, ids).items():
            for start in range(0, len(events), IDS_PER_FORGET):
                removed += self._forget_chunk(scope, events[start:start + IDS_PER_FORGET])
        self._book.forgot(tenant, ids)
        return removed

    def erase(self, tenant: str) -> None:
        """Erase every leaf scope of the tenant, deepest first. Raises EngineError."""
        for scope in sorted(self._scopes(tenant, fresh=True), key=layout.depth, reverse=True):
            self._erase_scope(scope)
        self._book.erased(tenant)

    def answer(self, tenant: str, question: str, nodes: tuple[str, ...], limit: int) -> str:
        """The server's grounded answers over the nodes' scopes, one line per scope that answered."""
        scopes = layout.selected_scopes(tenant, self._scopes(tenant), nodes)
        answers = self._each(scopes, lambda scope: self._answer_scope(scope, question, max(1, limit)))
        return "\n".join(dict.fromkeys(a.strip() for a in answers if a.strip()))

    def close(self) -> None:
        """Stop the worker threads and close connections."""
        self._pool.shutdown(wait=True)
        self.http.close()

    # -- dialect hooks -------------------------------------------------------------------

    def _call(self, method: str, route: str, *, params: Mapping[str, Any] | None = None, json: Any = None,
              retry: Retry = Retry.READ) -> dict[str, Any]:
        """One request; its JSON object body (``{}`` when empty). A 401/403 forgets the actor.

        Raises:
            EngineError: the request failed (see HttpClient.call) or the body is not an object.
        """
        try:
            body = self.http.call(method, route, params=params, json=json, headers=self._headers(route),
                                  retry=retry)
        except HttpStatusError as err:
            if err.status in (401, 403):
                self._actor = _UNKNOWN
            raise
        if body is not None and not isinstance(body, dict):
            raise EngineError(f"{self.name} {method} {route}: the answer is not a JSON object")
        return body or {}

    def _records(self, route: str, body: Any, *keys: str) -> list[dict[str, Any]]:
        """:func:`~memeval.engines.cortex.layout.records`, its shape error naming this route."""
        try:
            return layout.records(body, *keys)
        except layout.ShapeError as err:
            raise layout.ShapeError(f"{self.name} {route}: {err}") from None

    def _call_unless(self, status: int, method: str, route: str, **kwargs: Any) -> dict[str, Any] | None:
        """:meth:`_call`, or None when the server answers ``status`` (what was asked for is not there)."""
        try:
            return self._call(method, route, **kwargs)
        except HttpStatusError as err:
            if err.status != status:
                raise
            return None

    def _headers(self, route: str) -> dict[str, str]:
        """The actor header, learned once from ``v1/auth/whoami`` (404/405: never sent)."""
        with self._actor_lock:
            if self._actor is _UNKNOWN:
                try:
                    body = self.http.call("GET", "v1/auth/whoami")
                    self._actor = str(body.get("caller") or "") if isinstance(body, dict) else None
                except HttpStatusError as err:
                    if err.status not in (404, 405):
                        raise
                    self._actor = None
            return {"X-Cortex-Actor": self._actor} if self._actor else {}

    def _append(self, body: dict[str, Any], item: MemoryItem) -> dict[str, Any]:
        # Retry.READ on a write: the body's idempotency key turns a resend into a replay.
        return self._call("POST", self.routes["experience"], json=body, retry=Retry.READ)

    def _listed_scopes(self, tenant: str) -> Sequence[str]:
        root = layout.tenant_root(tenant)
        body = self._call_unless(404, "GET", "v1/scopes/list", params={"prefix": root + "/", "limit": 1000})
        listed = self._records("v1/scopes/list", body) if body is not None else []
        return [str(r.get("path")) for r in listed if r.get("path")]

    def _erase_scope(self, scope: str) -> None:
        body = {"scope": scope, "confirm_all": True, "audit_note": AUDIT_NOTE}
        receipt = self._call_unless(404, "POST", "v1/erasures", json=body)
        if receipt is None:
            return
        deadline = time.monotonic() + ERASURE_TIMEOUT_S
        while receipt.get("status") == "running" and time.monotonic() < deadline:
            time.sleep(ERASURE_POLL_S)
            receipt = self._call("GET", f"v1/erasures/{receipt.get('erasure_id')}")
        status = receipt.get("status")
        if status != "completed":
            waited = f" after {ERASURE_TIMEOUT_S:g} s" if status == "running" else ""
            raise EngineError(f"{self.name} erasure of {scope}: status {status!r}{waited}")

    def _forget_chunk(self, scope: str, event_ids: Sequence[str]) -> int:
        body = {"scope": scope, "layers": ["events"], "selector": {"memory_ids": list(event_ids)},
                "cascade": "redact_events", "audit_note": AUDIT_NOTE}
        # Resending a forget by ids is safe: it can only find fewer events left to delete.
        reply = self._call("POST", self.routes["forget"], json=body)
        deleted = reply.get("deleted")
        events = deleted.get("events") if isinstance(deleted, dict) else None
        if isinstance(events, bool) or not isinstance(events, int):  # a malformed reply is no "0 forgotten"
            raise EngineError(f"{self.name} forget: the reply has no deleted.events count: {str(reply)[:200]}")
        return events

    # -- shared machinery ----------------------------------------------------------------

    def _scopes(self, tenant: str, fresh: bool = False) -> Sequence[str]:
        """The tenant's leaf scopes: written by this process, plus the server's listing (see TenantBook)."""
        root = layout.tenant_root(tenant) + "/"

        def listing() -> Iterable[str]:
            return (s for s in map(layout.relative_scope, self._listed_scopes(tenant)) if s.startswith(root))

        return self._book.scopes(tenant, listing, fresh)

    def _each(self, values: Iterable[T], fn: Callable[[T], R]) -> Sequence[R]:
        """``fn`` over ``values``, at most ``concurrency`` at a time; results in order.

        Only public methods call this, never a function already running in the pool.
        """
        todo = tuple(values)
        return [fn(v) for v in todo] if len(todo) < 2 else tuple(gather(self._pool, fn, todo))

    def _walk(self, scope: str, labels: str | None = None, need: int | None = None) -> Sequence[Event]:
        """A scope's listing, each event once, newest first; stops early once ``need`` are known."""
        route = self.routes["events"]
        seen: dict[str, Event] = {}
        cursor = None
        for _ in range(MAX_PAGES):
            params = {"scope": scope, "limit": PAGE, **({"labels": labels} if labels else {}),
                      **({"cursor": cursor} if cursor else {})}
            body = self._call("GET", route, params=params)
            for event in self._records(route, body):
                seen.setdefault(str(event.get("id")), event)
            following = body.get("next_cursor")
            if not body.get("has_more") or not following or (need is not None and len(seen) >= need):
                return list(seen.values())
            if following == cursor:
                raise EngineError(f"{self.name} GET {route}: the server sent back the cursor {cursor!r}")
            cursor = str(following)
        raise EngineError(f"{self.name} GET {route}: more than {MAX_PAGES} pages in {scope}")

    def _newest(self, tenant: str, scopes: Sequence[str], need: int | None) -> Ranked:
        """Items of ``scopes``, each once, newest first, with their sort keys."""
        walks = self._each(scopes, lambda scope: self._walk(scope, need=need))
        pairs = [(item, layout.newest_key(e)) for w in walks for e in w if (item := layout.item_of(e, tenant))]
        found: dict[str, tuple[MemoryItem, Key]] = {}
        for item, key in sorted(pairs, key=lambda pair: pair[1], reverse=True):
            found.setdefault(item.id, (item, key))
        return list(found.values())

    def _pack_items(self, scope: str, tenant: str, query: str, limit: int) -> Ranked:
        body = layout.pack_request(scope, query, ["events"], {"events": min(max(1, limit), 1000)})
        pack = self._call_unless(404, "POST", self.routes["recall"], json=body)
        if pack is None:
            return []
        events = self._records(self.routes["recall"], pack.get("layers"), "events")
        pairs = ((layout.item_of(e, tenant), layout.newest_key(e)) for e in events)
        return [(item, key) for item, key in pairs if item is not None]

    def _answer_scope(self, scope: str, question: str, limit: int) -> str:
        share = -(-limit // 4)
        limits = {"events": 2 * limit, "facts": share, "beliefs": share, "episodes": share, "understanding": share}
        gone = None
        for _ in range(ANSWER_ROUNDS):
            pack = self._call("POST", self.routes["recall"], json=layout.pack_request(scope, question, list(limits), limits))
            pack_id = pack.get("pack_id")
            body = {"scope": scope, "question": question, "use_pack_id": pack_id, "cite_sources": True,
                    "include_context": True}
            try:
                reply = self._call("POST", self.routes["answer"], json=body)
                return str(reply.get("answer") or "")
            except HttpStatusError as err:
                if err.status != 404:
                    raise
                gone = err
        raise EngineError(f"{gone}; the pack was gone {ANSWER_ROUNDS} rounds in a row")

    def _locate(self, tenant: str, ids: tuple[str, ...]) -> EventsByScope:
        """Event ids by scope for item ids: from write receipts, else by ``tm:i:`` label."""
        by_scope: EventsByScope = {}
        known = self._book.located(tenant, ids)
        missing = [i for i in dict.fromkeys(ids) if i not in known]
        wanted = set(missing)
        scopes = self._scopes(tenant) if missing else []
        for start in range(0, len(missing), LABELS_PER_LOOKUP):
            labels = ",".join(layout.item_label(i) for i in missing[start:start + LABELS_PER_LOOKUP])
            walks = self._each(scopes, lambda scope: self._walk(scope, labels=labels))
            for scope, events in zip(scopes, walks):
                for event in events:
                    item = layout.item_of(event, tenant)
                    if item is not None and item.id in wanted:
                        known.setdefault(item.id, (scope, str(event.get("id"))))
        for scope, event_id in known.values():
            by_scope.setdefault(scope, []).append(event_id)
        return by_scope


class CortexEngine(CortexBase):
    """A CortexDB server as a memeval engine with every capability (see the module docstring)."""

    def info(self) -> EngineInfo:
        """Adapter and server identity; asks ``v1/admin/version`` once (404: no server version)."""
        if self._info is None:
            body = self._call_unless(404, "GET", "v1/admin/version") or {}
            flags = layout.obj(body.get("flags"))
            self._info = EngineInfo(
                self.name, __version__, capabilities_of(self), mask(str(body["version"])) if body.get("version") else None,
                tuple(mask(str(c)) for c in body.get("capabilities") or ()), masked(flags),
                self.settings.public())
        return self._info

    def build_beliefs(self, tenant: str) -> BuildReceipt:
        """``v1/beliefs/build`` once per scope of the tenant (never resent after an unknown outcome)."""
        scopes = self._scopes(tenant)
        counts: list[int | None] = []
        queued = False
        for scope in scopes:
            body = self._call("POST", "v1/beliefs/build", json={"scope": scope}, retry=Retry.ONCE)
            counts.append(int(body["built"]) if body.get("built") is not None else None)
            queued = queued or ("built" not in body and any(k in body for k in ("job_id", "build_id", "id")))
        built = None if None in counts else sum(c or 0 for c in counts)  # a scope that gave no count makes the total unknown
        return BuildReceipt(built, "skipped" if not scopes else "scheduled" if queued else "done")

    def inspect(self, tenant: str) -> Derived:
        """Facts, live beliefs and conflicts of every scope of the tenant (a 503 on conflicts: none)."""
        parts = self._each(self._scopes(tenant), self._derived)
        return Derived(tuple(f for p in parts for f in p.facts), tuple(b for p in parts for b in p.beliefs),
                       tuple(c for p in parts for c in p.conflicts))

    def conflicts(self, tenant: str) -> tuple[Conflict, ...]:
        """The conflicts of every scope of the tenant (a 503: none raised)."""
        parts = self._each(self._scopes(tenant), lambda scope: layout.derived_of([], [], self._conflict_records(scope)))
        return tuple(c for p in parts for c in p.conflicts)

    def usage(self) -> Usage:
        """Model usage from ``v1/admin/usage``: calls, tokens, USD and USD per role."""
        return layout.usage_of(self._call("GET", "v1/admin/usage"))

    def backlog(self) -> int:
        """Enrichment jobs pending. Raises EngineError when the server does not report them."""
        body = self._call("GET", "v1/admin/usage")
        queue = body.get("enrichment_backlog")
        pending = queue.get("jobs_pending") if isinstance(queue, dict) else None
        if not isinstance(pending, int):
            raise EngineError(f"{self.name} GET v1/admin/usage: no enrichment_backlog.jobs_pending")
        return pending

    # -- helpers of the derived layers ---------------------------------------------------

    def _derived(self, scope: str) -> Derived:
        params = {"scope": scope, "limit": DERIVED_LIMIT}
        facts = self._records("v1/facts", self._call("GET", "v1/facts", params=params), "facts")
        beliefs = self._records("v1/beliefs", self._call("GET", "v1/beliefs", params=params), "beliefs")
        return layout.derived_of(facts, beliefs, self._conflict_records(scope))

    def _conflict_records(self, scope: str) -> list[Event]:
        # 503: the server raises no conflicts (bitemporal mode off)
        params = {"scope": scope, "limit": DERIVED_LIMIT}
        body = self._call_unless(503, "GET", "v1/conflicts", params=params)
        return self._records("v1/conflicts", body, "conflicts") if body is not None else []


def _offset(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not cursor.isdigit():
        raise EngineError(f"not a cursor of this engine: {cursor!r}")
    return int(cursor)


ADAPTER = Adapter(create, URL_ENV, concurrent=True)
"""The ``cortex`` entry point."""
