"""Shared plumbing of the loopback servers: one JSON request/reply cycle on ThreadingHTTPServer,
and the pieces of each server's ``main()``: :func:`option_type` and :func:`run_in_foreground`.

A server is driven by an *app*: any object with ``handle(call) -> Reply | None``. ``None``
means "reset the connection": the socket is closed with no response at all (``SO_LINGER`` 0,
so the peer gets a TCP RST), which a client sees as a transport error, never as a status.
An app may also have ``close()``; :meth:`JsonHTTPServer.server_close` calls it.
"""

from __future__ import annotations

import argparse
import math
import os
import json
import signal
import socket
import struct
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType
from typing import Any, Protocol, TypeVar
from urllib.parse import parse_qs, unquote, urlsplit

from memeval.util.interruptible import handling
from memeval.util.nonce import NONCE_ENV, NONCE_HEADER

T = TypeVar("T")


class HttpError(Exception):
    """A request the server refuses: ``status``, a machine ``code`` and a human ``message``."""

    def __init__(self, status: int, code: str, message: str = ""):
        super().__init__(f"{status} {code}: {message}" if message else f"{status} {code}")
        self.status = status
        self.code = code
        self.message = message or code.replace("_", " ").lower()


@dataclass(frozen=True)
class Call:
    """One received request. ``path`` has no leading ``/`` and no query string."""

    method: str
    path: str
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]
    body: bytes

    def param(self, name: str) -> str | None:
        """The last value of query parameter ``name``, or None when absent."""
        values = self.query.get(name)
        return values[-1] if values else None

    def header(self, name: str) -> str | None:
        """A request header by case-insensitive name."""
        return self.headers.get(name.lower())

    def json_object(self) -> dict[str, Any]:
        """The body as a JSON object. Raises HttpError 422 ``INVALID_BODY`` otherwise."""
        try:
            data = json.loads(self.body or b"null")
        except (ValueError, UnicodeDecodeError):
            raise HttpError(422, "INVALID_BODY", "body is not JSON") from None
        if not isinstance(data, dict):
            raise HttpError(422, "INVALID_BODY", "body must be a JSON object")
        return data


@dataclass(frozen=True)
class Reply:
    """A response: ``body`` is JSON-serialisable, or None for an empty body."""

    status: int
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    """Bytes sent as the body instead of ``body``'s JSON (a spoiled answer)."""
    content_type: str = "application/json"
    byte_delay_s: float = 0.0
    """When set, the whole response goes out one byte at a time, this long before each byte."""


def retry_after(seconds: float | None) -> dict[str, str]:
    """A ``Retry-After`` header in whole seconds, at least 1; no header for None."""
    return {} if seconds is None else {"Retry-After": str(max(1, round(seconds)))}


class App(Protocol):
    """What a :class:`JsonHTTPServer` serves."""

    def handle(self, call: Call) -> Reply | None: ...


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle on, a kept-alive client's delayed ACK
    # stalls every response after the first by ~40 ms.
    disable_nagle_algorithm = True
    server: JsonHTTPServer

    def do_GET(self) -> None:
        self._dispatch()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _dispatch(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        call = Call(
            method=self.command,
            path=unquote(parts.path).lstrip("/"),
            query=parse_qs(parts.query, keep_blank_values=True),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
        )
        try:
            reply = self.server.app.handle(call)
        except Exception:
            traceback.print_exc()
            reply = Reply(500, {"error_code": "INTERNAL", "message": "unexpected server error"})
        if reply is None:
            self._reset()
        else:
            self._send(reply)

    def _send(self, reply: Reply) -> None:
        data = reply.raw if reply.raw is not None else b"" if reply.body is None else json.dumps(reply.body).encode()
        if reply.byte_delay_s:
            self._trickle(reply, data)
            return
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        if self.server.nonce:
            self.send_header(NONCE_HEADER, self.server.nonce)
        self.send_header("Content-Length", str(len(data)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _trickle(self, reply: Reply, data: bytes) -> None:
        """The response one byte per ``byte_delay_s``, status line first; stops when the client leaves."""
        head = f"HTTP/1.1 {reply.status} OK\r\nContent-Type: {reply.content_type}\r\nContent-Length: {len(data)}\r\n\r\n"
        self.close_connection = True
        try:
            for byte in head.encode() + data:
                time.sleep(reply.byte_delay_s)
                self.wfile.write(bytes((byte,)))
                self.wfile.flush()
        except OSError:
            pass

    def _reset(self) -> None:
        self.close_connection = True
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()


class JsonHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server (one thread per connection) that hands every request to ``app``."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], app: App):
        # set first: a failed bind calls server_close() from inside the base __init__
        self.app = app
        self.nonce = os.environ.get(NONCE_ENV, "")
        super().__init__(address, _Handler)

    @property
    def url(self) -> str:
        """``http://host:port`` of the bound socket."""
        host, port = self.socket.getsockname()[:2]
        return f"http://{host}:{port}"

    def server_close(self) -> None:
        """Close the socket, then the app (background threads, state files); a failed bind
        in ``__init__`` ends here too, so the app never outlives a server that did not start."""
        super().server_close()
        close = getattr(self.app, "close", None)
        if close is not None:
            close()


def option_type(parse: Callable[[str], T]) -> Callable[[str], T]:
    """``parse`` as an argparse ``type``: the user sees its ValueError message rather than
    argparse's ``invalid <function name> value``."""

    def convert(text: str) -> T:
        try:
            return parse(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    return convert


def seconds(text: str) -> float:
    """A finite number of seconds ``>= 0``, as an argparse ``type``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite number of seconds >= 0")
    return value


def count(text: str) -> int:
    """A whole number ``>= 0``, as an argparse ``type``."""
    if not text.strip().isdecimal():
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number >= 0")
    return int(text)


def port(text: str) -> int:
    """A TCP port (0 picks a free one), as an argparse ``type``."""
    value = count(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: a port is at most 65535")
    return value


def run_in_foreground(name: str, host: str, port: int, make: Callable[[], JsonHTTPServer]) -> int:
    """A server command's exit code: ``make()`` the server, then serve it until SIGTERM/SIGINT.

    0 after a signal; 2 when ``make`` raises ValueError (a bad setting or state file) and 3 when
    it raises OSError (the address cannot be bound), each with ``<name>: …`` on stderr.
    """
    try:
        server = make()
    except ValueError as err:
        print(f"{name}: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"{name}: cannot listen on {host}:{port}: {err}", file=sys.stderr)
        return 3
    return _serve_until_signal(server, name)


def _serve_until_signal(server: JsonHTTPServer, name: str) -> int:
    """Announce ``<name> listening on <url>`` on stdout, serve until SIGTERM/SIGINT, close; 0,
    or 1 when the serving thread died first (its traceback is on stderr).

    The server runs in a thread and the signal only sets an event: an exception raised from
    the handler could land inside the server's own request code (starting a handler thread,
    say), where socketserver prints it and serves on.
    """
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    serving = threading.Thread(target=server.serve_forever, name=f"{name}-serve", daemon=True)
    with handling((signal.SIGTERM, signal.SIGINT), on_signal):
        serving.start()
        print(f"{name} listening on {server.url}", flush=True)
        try:
            while not stop.wait(0.5) and serving.is_alive():
                pass
        finally:
            server.shutdown()
            serving.join()
            server.server_close()
    sys.stdout.flush()
    return 0 if stop.is_set() else 1
