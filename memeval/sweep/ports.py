"""Ports for the sweep's servers: a pool over the matrix's range, and pinning a definition's
server block to one port."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

from memeval.engines.definition import EngineDef
from memeval.engines.server import port_free

DEFAULT_URL = "http://127.0.0.1:{port}"


class PortPool:
    """Hands out ports in [first, last] that no running cell holds and that are free now."""

    def __init__(self, first: int, last: int):
        self._ports = range(first, last + 1)
        self._held: set[int] = set()
        self._lock = threading.Lock()

    def acquire(self) -> int | None:
        """A free port, now held until :meth:`release`; None when every port is taken."""
        with self._lock:
            for port in self._ports:
                if port not in self._held and port_free(port):
                    self._held.add(port)
                    return port
        return None

    def release(self, port: int) -> None:
        """Give ``port`` back."""
        with self._lock:
            self._held.discard(port)


def with_port(engine: EngineDef, port: int) -> EngineDef:
    """``engine`` with ``{port}`` already filled in everywhere its server block uses it, so the
    server listens on ``port`` whatever port the starter would pick."""
    server: dict[str, Any] = dict(engine.server or {})
    server.setdefault("url", DEFAULT_URL)
    filled = {key: _fill(value, str(port)) for key, value in server.items()}
    return dataclasses.replace(engine, server=filled)


def _fill(value: Any, port: str) -> Any:
    if isinstance(value, str):
        return value.replace("{port}", port)
    if isinstance(value, list):
        return [_fill(v, port) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, port) for k, v in value.items()}
    return value
