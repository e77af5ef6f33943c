"""The ``mcp`` adapter: any memory server that speaks the Model Context Protocol.

The engine definition names a server to start over stdio (``command``) or a streamable-HTTP URL
(``url``); the engine lists the server's tools, binds the lifecycle calls to them (named in the
definition or discovered, :mod:`memeval.engines.mcp.tools`) and says in its info which tool
serves which call. Settings: :mod:`memeval.engines.mcp.config`; the mapping:
:mod:`memeval.engines.mcp.engine`. Needs the ``mcp`` extra (the official SDK).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from memeval.engines.base import Adapter
from memeval.engines.mcp.config import describe, read_config, starts
from memeval.engines.mcp.engine import McpEngine, McpErasingEngine
from memeval.engines.mcp.records import ENVELOPE, Record, item_metadata, item_of  # the wire both ends share
from memeval.engines.mcp.session import McpSession
from memeval.engines.mcp.tools import bind
from memeval.errors import UsageError


def create(settings: Mapping[str, Any]) -> McpEngine:
    """The factory of the ``mcp`` adapter: checks the settings, connects, binds the tools.

    Raises:
        UsageError: bad settings, the ``mcp`` SDK missing, or no tool for write or recall.
        EngineError: the server cannot be started or reached, or does not answer in time.
    """
    config = read_config(settings, os.environ)
    try:
        import mcp.client.session  # noqa: F401  (the SDK is an extra)
    except ImportError as err:
        raise UsageError(f"mcp engine: the MCP SDK is not installed (pip install 'memeval-harness[mcp]'): {err}") from None
    session = McpSession.open(config.transport, config.timeout_s, config.start_timeout_s)
    try:
        bindings = bind(session.tools, config.tools, config.args)
    except BaseException:
        session.close()
        raise
    kind = McpErasingEngine if "erase" in bindings else McpEngine
    return kind(session, bindings, config)


ADAPTER = Adapter(create, starts=starts, describe=describe)
"""The ``mcp`` entry point."""

__all__ = ["ADAPTER", "ENVELOPE", "McpEngine", "McpErasingEngine", "Record", "item_metadata", "item_of"]
