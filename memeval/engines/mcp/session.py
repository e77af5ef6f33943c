"""A synchronous MCP client session: the official ``mcp`` SDK (async) on a private event loop.

::

    session = McpSession.open(Stdio(("memeval", "serve", "mcp")), timeout_s=30)
    tools = session.tools                      # listed once, at open
    answer = session.call("search", {"tenant": "t", "query": "badge"})
    session.close()                            # ends the session; stops a server it started

The session lives in one task on a daemon thread's event loop (the SDK's transports must be
entered and left in the same task); :meth:`McpSession.call` hands each call to that loop and
waits at most ``timeout_s``. A server that does not answer in time is cut off: the call raises
EngineError, and a connection that cannot open in time is torn down before the error is raised.
A stdio server's stderr goes to a private file (masked tail quoted in errors), never to ours.
:meth:`McpSession.close` stops a stdio server the session started (the SDK terminates it, then
kills it) and waits for the loop thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import tempfile
import threading
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from memeval.errors import EngineError
from memeval.secrets import mask

CLOSE_GRACE_S = 10.0
TAIL_CHARS = 600


@dataclass(frozen=True)
class Stdio:
    """A server started as a process speaking MCP on its stdin and stdout."""

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None


@dataclass(frozen=True)
class Http:
    """A server reached over streamable HTTP at ``url``; ``headers`` go with every request
    (to that origin only: the SDK follows no redirect to another origin)."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the server lists it."""

    name: str
    description: str
    properties: Mapping[str, Any]
    required: tuple[str, ...]


@dataclass(frozen=True)
class Answer:
    """A tool's answer: its structured content (None when absent) and its text blocks."""

    structured: Any
    texts: list[str]


class McpSession:
    """One open MCP client session (see the module docstring); safe to call from many threads."""

    def __init__(self, transport: Stdio | Http, timeout_s: float) -> None:
        """Prefer :meth:`open`, which also connects. ``timeout_s`` is the deadline of each call."""
        self.transport, self.timeout_s = transport, timeout_s
        self.tools: tuple[ToolSpec, ...] = ()
        self.server: str | None = None
        self._errlog: TextIO = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="memeval-mcp", daemon=True)
        self._session: Any = None
        self._stop: asyncio.Event | None = None
        self._holder: concurrent.futures.Future[None] | None = None

    @classmethod
    def open(cls, transport: Stdio | Http, timeout_s: float, start_timeout_s: float) -> McpSession:
        """Connect, initialise and list the tools, within ``start_timeout_s``.

        Raises:
            EngineError: the server could not start, or did not initialise or list its tools
                in time (everything started is stopped first).
        """
        session = cls(transport, timeout_s)
        session._thread.start()
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        session._holder = asyncio.run_coroutine_threadsafe(session._hold(ready), session._loop)
        try:
            ready.result(start_timeout_s)
            return session
        except concurrent.futures.TimeoutError:
            reason = f"MCP server did not initialise within {start_timeout_s:g} s"
        except Exception as err:
            reason = f"MCP server cannot be reached: {_one_line(err)}"
        tail = session._tail()
        session.close()
        raise EngineError(reason + tail)

    def call(self, tool: str, arguments: Mapping[str, Any]) -> Answer:
        """Call ``tool`` and return its answer.

        Raises:
            EngineError: the server answered with an error (a protocol error or ``isError``),
                the connection failed, or no answer came within ``timeout_s``.
        """
        if self._session is None:
            raise EngineError("MCP session is closed")
        future = asyncio.run_coroutine_threadsafe(self._call(tool, dict(arguments)), self._loop)
        try:
            return future.result(self.timeout_s)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise EngineError(f"MCP tool {tool} did not answer within {self.timeout_s:g} s") from None
        except EngineError:
            raise
        except Exception as err:
            raise EngineError(f"MCP tool {tool} failed: {_one_line(err)}{self._tail()}") from None

    def close(self) -> None:
        """End the session and stop the server process it started; idempotent."""
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._holder is not None:
            with contextlib.suppress(Exception):
                self._holder.result(CLOSE_GRACE_S)
            if not self._holder.done():
                self._loop.call_soon_threadsafe(self._holder.cancel)
                with contextlib.suppress(Exception):
                    self._holder.result(CLOSE_GRACE_S)
            self._holder = None
        self._session = None
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(CLOSE_GRACE_S)
        if not self._thread.is_alive() and not self._loop.is_closed():
            self._loop.close()
        self._errlog.close()

    async def _hold(self, ready: concurrent.futures.Future[None]) -> None:
        """Open the session, report ready (or the failure), and keep it until close."""
        from mcp.client.session import ClientSession

        self._stop = asyncio.Event()
        try:
            async with self._streams() as (read, write), ClientSession(read, write) as session:
                init = await session.initialize()
                self.server = f"{init.server_info.name} {init.server_info.version}".strip()
                self.tools = await _list_tools(session)
                self._session = session
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as err:
            if not ready.done():
                ready.set_exception(err if isinstance(err, Exception) else EngineError("MCP session cancelled"))
            if not isinstance(err, Exception | asyncio.CancelledError):
                raise
        finally:
            self._session = None

    @contextlib.asynccontextmanager
    async def _streams(self) -> AsyncIterator[tuple[Any, Any]]:
        if isinstance(self.transport, Stdio):
            from mcp.client.stdio import StdioServerParameters, stdio_client

            argv = self.transport.argv
            params = StdioServerParameters(command=argv[0], args=list(argv[1:]), env=dict(self.transport.env) or None,
                                           cwd=self.transport.cwd)
            async with stdio_client(params, errlog=self._errlog) as streams:
                yield streams[0], streams[1]
            return
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        async with create_mcp_http_client(headers=dict(self.transport.headers)) as client, \
                streamable_http_client(self.transport.url, http_client=client) as streams:
            yield streams[0], streams[1]

    async def _call(self, tool: str, arguments: dict[str, Any]) -> Answer:
        import mcp_types

        result = await self._session.call_tool(tool, arguments, read_timeout_seconds=self.timeout_s)
        if not isinstance(result, mcp_types.CallToolResult):
            raise EngineError(f"MCP tool {tool} answered a {type(result).__name__}, not a tool result")
        texts = [block.text for block in result.content if isinstance(block, mcp_types.TextContent)]
        if result.is_error:
            raise EngineError(f"MCP tool {tool} reported an error: {_one_line(' '.join(texts) or 'no text')}")
        return Answer(result.structured_content, texts)

    def _tail(self) -> str:
        with contextlib.suppress(ValueError, OSError):
            self._errlog.flush()
            self._errlog.seek(0)
            text = " ".join(self._errlog.read()[-TAIL_CHARS:].split())
            return f"; server stderr: {mask(text)}" if text else ""
        return ""


async def _list_tools(session: Any) -> tuple[ToolSpec, ...]:
    """Every tool, following the listing's cursors."""
    import mcp_types

    tools: list[ToolSpec] = []
    cursor: str | None = None
    while True:
        listed = await session.list_tools(params=mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        for tool in listed.tools:
            schema = tool.input_schema or {}
            props = schema.get("properties") or {}
            tools.append(ToolSpec(tool.name, tool.description or "", props if isinstance(props, dict) else {},
                                  tuple(str(r) for r in schema.get("required") or ())))
        cursor = listed.next_cursor
        if not cursor:
            return tuple(tools)


def _one_line(err: object) -> str:
    """The error as one masked line; a task group's error is the first error inside it."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    text = " ".join(str(err).split()) or type(err).__name__
    return mask(text[:400])

