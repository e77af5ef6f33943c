"""A tiny MCP memory server for the mcp engine's tests, run as its own process.

``python tests/engines/mcp_tiny.py MODE [--no-delete] [--no-list] [--http PORT]``

Its tools are named as many memory servers name theirs (``memory_store``, ``memory_search``,
``memory_delete``, ``memory_list``), take the tenant as ``user_id`` and answer JSON text. MODE
says how ``memory_search`` answers: ``ok`` (word match, records with their metadata), or one
kind of garbage: ``not-json``, ``not-list``, ``no-text``, ``bad-score``, ``bad-envelope``,
``error`` (a tool error), ``hang`` (never answers). With ``TINY_PID_FILE`` set it writes its pid
there. Over HTTP (``--http PORT``, 127.0.0.1) it requires ``Authorization: Bearer <key>`` and
``?access=<key>`` with the key from ``TINY_KEY``, and appends each request's path and headers
to ``TINY_LOG``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from typing import Any

from mcp.server.mcpserver import MCPServer

GARBAGE = {
    "not-json": "here are your memories: none of them JSON",
    "not-list": json.dumps({"results": 5}),
    "no-text": json.dumps({"results": [{"id": "m1", "score": 1.0}]}),
    "bad-score": json.dumps({"results": [{"id": "m1", "text": "the zircon badge", "score": "high"}]}),
    "bad-envelope": json.dumps({"results": [{"id": "m1", "text": "x", "metadata": {"memeval": {"node": 5}}}]}),
}


def build(mode: str, delete: bool, listing: bool) -> MCPServer:
    server: MCPServer = MCPServer("tiny-memory", version="0.0.1")
    store: dict[str, list[dict[str, Any]]] = {}

    @server.tool(structured_output=False)
    def memory_store(content: str, user_id: str, metadata: dict[str, Any] | None = None) -> str:
        """Store a memory."""
        memories = store.setdefault(user_id, [])
        memory = {"id": f"mem-{uuid.uuid4().hex[:8]}", "text": content, "metadata": metadata or {}}
        memories.append(memory)
        return json.dumps({"id": memory["id"]})

    @server.tool(structured_output=False)
    def memory_search(query: str, user_id: str, top_k: int = 10) -> str:
        """Search memories."""
        if mode == "hang":
            time.sleep(3600)
        if mode == "error":
            raise ValueError("the index is on fire")
        if mode in GARBAGE:
            return GARBAGE[mode]
        words = set(query.lower().split())
        found = [m for m in reversed(store.get(user_id, [])) if words & set(m["text"].lower().split())]
        return json.dumps({"results": [{**m, "score": 1.0} for m in found[:top_k]]})

    if delete:
        @server.tool(structured_output=False)
        def memory_delete(memory_id: str, user_id: str) -> str:
            """Delete one memory by id."""
            before = len(store.get(user_id, []))
            store[user_id] = [m for m in store.get(user_id, []) if m["id"] != memory_id]
            return json.dumps({"deleted": before - len(store[user_id])})

    if listing:
        @server.tool(structured_output=False)
        def memory_list(user_id: str, limit: int = 20, offset: int = 0) -> str:
            """List memories, newest first."""
            newest = list(reversed(store.get(user_id, [])))
            return json.dumps({"items": newest[offset:offset + limit]})

    return server


def guarded(app: Any, key: str, log: str | None) -> Any:
    """``app`` behind a key check, every request logged."""
    async def wrapper(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode(): v.decode() for k, v in scope["headers"]}
            if log:
                with open(log, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps({"path": scope["path"], "query": scope["query_string"].decode(),
                                             "headers": headers}) + "\n")
            query = scope["query_string"].decode()
            if headers.get("authorization") != f"Bearer {key}" or f"access={key}" not in query:
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"no key"})
                return
        await app(scope, receive, send)
    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["ok", "hang", "error", *GARBAGE])
    parser.add_argument("--no-delete", action="store_true")
    parser.add_argument("--no-list", action="store_true")
    parser.add_argument("--http", type=int)
    args = parser.parse_args()
    if os.environ.get("TINY_PID_FILE"):
        with open(os.environ["TINY_PID_FILE"], "w", encoding="utf-8") as handle:
            handle.write(str(os.getpid()))
    server = build(args.mode, not args.no_delete, not args.no_list)
    if args.http is None:
        server.run("stdio")
        return
    import uvicorn

    app = guarded(server.streamable_http_app(), os.environ["TINY_KEY"], os.environ.get("TINY_LOG"))
    print(f"tiny-memory listening on http://127.0.0.1:{args.http}/mcp", file=sys.stderr, flush=True)
    uvicorn.run(app, host="127.0.0.1", port=args.http, log_level="warning")


if __name__ == "__main__":
    main()
