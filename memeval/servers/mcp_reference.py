"""memeval's reference engine as an MCP server: ``memeval serve mcp``.

An agent (or any MCP client) gets memeval's embedded reference memory as five tools, each with
the tenant as an argument, answering JSON (structured content, and the same JSON as text):

- ``remember(tenant, text, metadata?)`` -> ``{"id", "replayed"}``: stores one memory. A
  ``metadata.memeval`` envelope (what memeval's ``mcp`` engine sends) places it exactly (node,
  kind, role, thread, time, id); without one it is an undated learning. Other metadata is not kept.
- ``search(tenant, query?, limit=10, nodes?, prefer_recent=true)`` -> ``{"results": [memory]}``:
  ranked by the reference engine; no query lists the newest; ``nodes`` are node names or
  prefixes ending in ``:`` (default: every node).
- ``list_memories(tenant, limit=100, cursor?)`` -> ``{"items": [memory], "next_cursor"}``.
- ``forget(tenant, ids)`` -> ``{"removed": n}``; ``erase(tenant)`` -> ``{"erased": tenant}``.

A memory is ``{"id", "text", "score"?, "metadata": {"memeval": {...}}}``. A bad cursor or
argument is a tool error. stdio by default; ``--http PORT`` serves streamable HTTP at
``http://127.0.0.1:PORT/mcp`` (loopback only). ``--embedder`` and ``--path`` are the reference
engine's settings.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memeval.engines.base import Hit, MemoryItem, RecallRequest
from memeval.engines.mcp import ENVELOPE, Record, item_metadata, item_of
from memeval.errors import MemevalError, exit_code

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from memeval.engines.reference import ReferenceEngine

NAME = "memeval-reference"
EVERY_NODE = ("learnings", "source:", "agent:")


def build_server(engine: ReferenceEngine) -> MCPServer:
    """An MCP server whose tools call ``engine`` (see the module docstring)."""
    from mcp.server.mcpserver import MCPServer

    import memeval

    server: MCPServer = MCPServer(NAME, version=memeval.__version__,
                                  instructions="memeval's reference memory: remember, search, list, forget, erase; "
                                               "every tool takes the tenant whose memory it uses.")

    @server.tool(description="Remember (store) one memory in a tenant. Returns its id.")
    def remember(tenant: str, text: str, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
        item = _item(tenant, text, metadata)
        receipt = _engine_call(lambda: engine.write(item))
        return {"id": receipt.id, "replayed": receipt.replayed}

    @server.tool(description="Search (recall) a tenant's memories, best first; without a query, the newest.")
    def search(tenant: str, query: str | None = None, limit: int = 10, nodes: list[str] | None = None,
               prefer_recent: bool = True) -> dict[str, Any]:
        request = RecallRequest(tenant, tuple(nodes or EVERY_NODE), query, limit, prefer_recent)
        return {"results": [_memory(hit.item, hit) for hit in _engine_call(lambda: engine.recall(request))]}

    @server.tool(description="List a tenant's memories, newest first, a page at a time.")
    def list_memories(tenant: str, limit: int = 100, cursor: str | None = None) -> dict[str, Any]:
        page = _engine_call(lambda: engine.page(tenant, cursor, limit))
        return {"items": [_memory(item) for item in page.items], "next_cursor": page.cursor}

    @server.tool(description="Forget (delete) memories of a tenant by id. Returns how many were removed.")
    def forget(tenant: str, ids: list[str]) -> dict[str, Any]:
        return {"removed": _engine_call(lambda: engine.forget(tenant, tuple(ids)))}

    @server.tool(description="Erase every memory of a tenant.")
    def erase(tenant: str) -> dict[str, Any]:
        _engine_call(lambda: engine.erase(tenant))
        return {"erased": tenant}

    return server


def _item(tenant: str, text: str, metadata: dict[str, Any] | None) -> MemoryItem:
    """The item a ``remember`` call describes.

    Raises:
        ValueError: a broken envelope (the SDK answers it as a tool error).
        Malformed: likewise.
    """
    envelope = (metadata or {}).get(ENVELOPE)
    if envelope is None:
        return MemoryItem(tenant, "learnings", "learning", text)
    if not isinstance(envelope, dict):
        raise ValueError("metadata.memeval must be an object")
    item = item_of(tenant, Record(text, envelope=envelope))
    assert item is not None  # an envelope was given
    return item


def _memory(item: MemoryItem, hit: Hit | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": item.id, "text": item.text, "metadata": item_metadata(item)}
    if hit is not None:
        out["score"] = hit.score
    return out


def _engine_call(call: Any) -> Any:
    """``call()``, an engine failure raised as a ValueError (the SDK answers it as a tool error)."""
    try:
        return call()
    except MemevalError as err:
        raise ValueError(str(err)) from None


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Serve until the client leaves (stdio) or SIGTERM/Ctrl-C (HTTP). Exit codes: 0 after a
    clean stop, 2 for bad usage, 3 when the engine cannot start."""
    parser = argparse.ArgumentParser(prog=prog, description="memeval's reference engine as an MCP server.")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT/mcp")
    parser.add_argument("--embedder", default="auto", choices=("auto", "none", "static"))
    parser.add_argument("--path", help="a folder the tenants are saved in (default: memory only)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.http is not None and not 0 < args.http < 65536:
        parser.error("--http takes a port number from 1 to 65535")
    from memeval.engines.reference import create

    try:
        engine = create({"embedder": args.embedder, **({"path": args.path} if args.path else {})})
    except MemevalError as err:  # a bad setting (2) or a saved tenant that cannot be read (3)
        print(f"{parser.prog}: {err}", file=sys.stderr)
        return exit_code(err.outcome)
    server = build_server(engine)
    # SIGTERM (how an MCP client or a supervisor stops a server) unwinds like Ctrl-C, so the
    # tenants of --path are saved by engine.close() below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        if args.http is None:
            server.run("stdio")
        else:
            print(f"mcp-reference listening on http://127.0.0.1:{args.http}/mcp", file=sys.stderr, flush=True)
            server.run("streamable-http", host="127.0.0.1", port=args.http)
    except KeyboardInterrupt:
        pass
    finally:
        engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(prog="python -m memeval.servers.mcp_reference"))
