"""The generic MCP engine: memeval's lifecycle calls mapped onto an MCP server's tools.

Each call goes to the tool :mod:`memeval.engines.mcp.tools` bound to it. Items read back whole
from a server that keeps the metadata a write sends (:mod:`memeval.engines.mcp.records`);
from one that does not, a memory is matched by its text to the items this engine wrote in that
tenant (forgotten ones included, so a server that keeps what it was told to forget shows it),
and memories it did not write are skipped (they are not memeval's items). A page lists an item
once however often the server repeats it.

- ``write`` sends the text, the tenant (``tenant_template`` applied) and the metadata; on a
  server that cannot keep the item's id, a second write of an item this engine already wrote
  is a replay answered here, without a call.
- ``recall`` passes the query, the tenant, the limit, the node patterns (when the tool takes
  ``nodes``) and ``prefer_recent``; without a ``nodes`` argument the filter is applied here over
  ``overfetch`` × ``limit`` results. ``query=None`` is a search without a query when the tool
  allows one, else the newest items in the nodes from the listing.
- ``page`` calls the list tool (``cursor`` or ``offset`` paging), or, without one, pages the
  log of writes this engine accepted; ``forget`` calls the delete tool with the server's id of
  each item (the one its write answered, else the item's id).

Capabilities: ``forget`` only with a delete tool (without one, ``forget`` raises Unsupported and
forgetting probes are unsupported), ``erase`` only with an erase tool
(:class:`McpErasingEngine`). A malformed answer is an EngineError, never an empty result.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import memeval
from memeval.engines.base import (Capability, EngineInfo, Hit, ListPage, MemoryItem, RecallRequest, WriteReceipt,
                                  capabilities_of, node_matches)
from memeval.engines.listing import ItemLog
from memeval.engines.mcp.config import McpConfig
from memeval.engines.mcp.records import (Malformed, Record, answer_json, count_of, cursor_of, id_of, item_metadata,
                                         item_of, records_of)
from memeval.engines.mcp.session import Answer, McpSession
from memeval.engines.mcp.tools import Binding
from memeval.errors import EngineError, Unsupported

MAX_LIST_PAGES = 10_000
MATCH_CHARS = 100


class McpEngine:
    """An MCP server as a memeval :class:`~memeval.engines.base.Engine` (see the module docstring)."""

    def __init__(self, session: McpSession, bindings: Mapping[str, Binding], config: McpConfig) -> None:
        """Prefer :func:`memeval.engines.mcp.create`; the engine owns ``session`` and closes it."""
        self._session, self._bound, self._config = session, dict(bindings), config
        self._keeps_items = "metadata" in bindings["write"].args
        self._logs: dict[str, ItemLog] = {}
        self._ever: dict[str, dict[str, MemoryItem]] = {}  # never pruned: a forgotten item still listed must show
        self._server_ids: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def info(self) -> EngineInfo:
        """The adapter, the server's name and version, and which tool serves which call."""
        caps = capabilities_of(self) - (set() if "forget" in self._bound else {Capability.FORGET})
        recall = self._bound["recall"]
        settings: dict[str, Any] = {
            **self._config.shown, "answers": self._config.answers,
            "tools": {call: b.describe() for call, b in self._bound.items()},
            "node_filter": "server" if "nodes" in recall.args else f"client, over {self._config.overfetch} x limit",
            "listing": "server" if "list" in self._bound else "the writes this engine accepted",
        }
        return EngineInfo("mcp", memeval.__version__, frozenset(caps), server_version=self._session.server,
                          settings=settings)

    def write(self, item: MemoryItem) -> WriteReceipt:
        """Store ``item`` through the write tool (see the module docstring). Raises EngineError."""
        with self._lock:
            log = self._logs.setdefault(item.tenant, ItemLog())
            known = item.id in log
        if known and not self._keeps_items:
            return WriteReceipt(item.id, replayed=True)
        binding = self._bound["write"]
        answer = self._call(binding, text=item.text, tenant=self._tenant(item.tenant),
                            metadata=item_metadata(item) if self._keeps_items else None)
        value = self._json(binding, answer) if self._config.answers == "json" else None
        server_id = id_of(value, answer.texts)
        with self._lock:
            if item.id not in log:
                log.add(item)
            self._ever.setdefault(item.tenant, {})[item.id] = item
            if server_id is not None:
                self._server_ids[(item.tenant, item.id)] = server_id
        return WriteReceipt(item.id, replayed=isinstance(value, dict) and value.get("replayed") is True)

    def page(self, tenant: str, cursor: str | None = None, limit: int = 100) -> ListPage:
        """A page of ``tenant`` from the list tool, or from the accepted writes without one.

        Raises:
            EngineError: ``limit`` below 1, a cursor the server refuses, or a malformed answer.
        """
        if limit < 1:
            raise EngineError(f"page limit must be at least 1, not {limit}")
        binding = self._bound.get("list")
        if binding is None:
            with self._lock:
                log = self._logs.get(tenant)
                return log.page(cursor, limit) if log else ItemLog().page(cursor, limit)
        offset = self._offset(binding, cursor)
        answer = self._call(binding, tenant=self._tenant(tenant), limit=limit,
                            cursor=(offset if offset is not None else cursor) or None)
        records, value = self._records(binding, answer)
        found = self._items(binding, tenant, records)
        items = tuple({item.id: item for item, _ in found}.values())
        if offset is not None:  # a text answer's lines that are no memory (a heading) do not count
            served = len(records) if self._config.answers == "json" else len(found)
            return ListPage(items, str(offset + served) if served >= limit else None)
        try:
            return ListPage(items, cursor_of(value))
        except Malformed as err:
            raise EngineError(f"MCP tool {binding.tool}: {err}") from None

    def recall(self, request: RecallRequest) -> list[Hit]:
        """At most ``request.limit`` hits from the requested nodes, best first (see the module
        docstring); a memory without a score scores ``1 / position``. Raises EngineError."""
        binding = self._bound["recall"]
        if request.limit <= 0:
            return []
        if request.query is None and binding.query_required:
            return self._newest(request)
        server_nodes = "nodes" in binding.args
        answer = self._call(binding, query=request.query, tenant=self._tenant(request.tenant),
                            limit=request.limit if server_nodes else request.limit * self._config.overfetch,
                            nodes=list(request.nodes) if server_nodes else None, prefer_recent=request.prefer_recent)
        records, _ = self._records(binding, answer)
        hits: list[Hit] = []
        seen: set[str] = set()
        for item, score in self._items(binding, request.tenant, records):
            if item.id in seen or not node_matches(item.node, request.nodes):
                continue
            seen.add(item.id)
            hits.append(Hit(item, score if score is not None else 1.0 / (len(hits) + 1)))
            if len(hits) == request.limit:
                break
        return hits

    def forget(self, tenant: str, ids: tuple[str, ...]) -> int:
        """Delete items by id through the delete tool; returns the server's count.

        Raises:
            Unsupported: the server has no delete tool.
            EngineError: the server failed or answered without a count.
        """
        binding = self._bound.get("forget")
        if binding is None:
            raise Unsupported("the MCP server has no delete tool")
        with self._lock:
            wanted = [self._server_ids.get((tenant, i), i) for i in ids]
        removed = 0
        batches = [wanted] if "ids" in binding.args else [[one] for one in wanted]
        for batch in batches:
            if not batch:
                continue
            answer = self._call(binding, tenant=self._tenant(tenant),
                                ids=batch if "ids" in binding.args else None, id=batch[0])
            value = self._json(binding, answer) if self._config.answers == "json" else None
            try:
                removed += count_of(value, answer.texts)
            except Malformed as err:
                raise EngineError(f"MCP tool {binding.tool}: {err}") from None
        with self._lock:
            if tenant in self._logs:
                self._logs[tenant].remove(ids)
            for i in ids:
                self._server_ids.pop((tenant, i), None)
        return removed

    def close(self) -> None:
        """End the session (stopping a server this engine started)."""
        self._session.close()

    def _tenant(self, tenant: str) -> str:
        return self._config.tenant_template.replace("{tenant}", tenant)

    def _call(self, binding: Binding, **roles: Any) -> Answer:
        args = dict(binding.fixed)
        for role, value in roles.items():
            if role in binding.args and value is not None:
                args[binding.args[role]] = value
        return self._session.call(binding.tool, args)

    def _json(self, binding: Binding, answer: Answer) -> Any:
        try:
            return answer_json(answer.structured, answer.texts)
        except Malformed as err:
            raise EngineError(f"MCP tool {binding.tool}: {err}") from None

    def _records(self, binding: Binding, answer: Answer) -> tuple[list[Record], Any]:
        """The memories of an answer (JSON, or one per text line) and its JSON value."""
        if self._config.answers == "text":
            return [Record(line.strip()) for text in answer.texts for line in text.splitlines() if line.strip()], None
        value = self._json(binding, answer)
        try:
            return records_of(value), value
        except Malformed as err:
            raise EngineError(f"MCP tool {binding.tool}: {err}") from None

    def _items(self, binding: Binding, tenant: str, records: list[Record]) -> list[tuple[MemoryItem, float | None]]:
        """Each record as an item: from its envelope, else by text from this engine's writes."""
        found: list[tuple[MemoryItem, float | None]] = []
        for record in records:
            try:
                item = item_of(tenant, record)
            except Malformed as err:
                raise EngineError(f"MCP tool {binding.tool}: {err}") from None
            item = item or self._by_text(tenant, record.text)
            if item is not None:
                found.append((item, record.score))
        return found

    def _by_text(self, tenant: str, text: str) -> MemoryItem | None:
        wanted = " ".join(text.split())
        with self._lock:
            for item in reversed(self._ever.get(tenant, {}).values()):
                own = " ".join(item.text.split())
                if own == wanted or (own[:MATCH_CHARS] and own[:MATCH_CHARS] in wanted):
                    return item
        return None

    def _offset(self, binding: Binding, cursor: str | None) -> int | None:
        """The integer offset a cursor stands for when the list tool pages by offset (else None)."""
        if binding.args.get("cursor") != "offset":
            return None
        if cursor is None:
            return 0
        if not cursor.isdigit():
            raise EngineError(f"invalid list cursor {cursor!r}")
        return int(cursor)

    def _newest(self, request: RecallRequest) -> list[Hit]:
        """The newest items in the nodes, from the listing, for a search tool that needs a query."""
        hits: list[Hit] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            page = self.page(request.tenant, cursor, 100)
            for item in page.items:
                if node_matches(item.node, request.nodes):
                    hits.append(Hit(item, 1.0 / (len(hits) + 1)))
                    if len(hits) == request.limit:
                        return hits
            if page.cursor is None:
                return hits
            cursor = page.cursor
        raise EngineError(f"the listing of {request.tenant} did not end after {MAX_LIST_PAGES} pages")


class McpErasingEngine(McpEngine):
    """An :class:`McpEngine` whose server has an erase tool: capability ``erase``."""

    def erase(self, tenant: str) -> None:
        """Empty ``tenant`` through the erase tool. Raises EngineError."""
        binding = self._bound["erase"]
        answer = self._call(binding, tenant=self._tenant(tenant))
        if self._config.answers == "json":
            self._json(binding, answer)
        with self._lock:
            self._logs.pop(tenant, None)
            for key in [k for k in self._server_ids if k[0] == tenant]:
                del self._server_ids[key]
