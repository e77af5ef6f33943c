"""``memeval serve fake-cortex|mock-inference|mcp``: run a loopback server in the foreground.

The options are the servers' own (``memeval serve fake-cortex --help``); this layer only
passes them through, so the module command lines (``python -m memeval.servers.fake_cortex``)
and these stay one thing. Both bind ``--host`` (default 127.0.0.1) and ``--port`` (default 0,
a free port), print ``<name> listening on <url>``, and stop cleanly on SIGTERM or Ctrl-C.
``memeval serve mcp`` is memeval's reference engine as an MCP server (stdio, or ``--http PORT``;
:mod:`memeval.servers.mcp_reference`): not a test double, a memory an agent can use.
"""

from __future__ import annotations

import click

from memeval.errors import Outcome
from memeval.servers import mcp_reference
from memeval.servers.fake_cortex import server as fake_cortex
from memeval.servers.mock_inference import server as mock_inference

_PASS_THROUGH = {"ignore_unknown_options": True, "help_option_names": []}


@click.group("serve")
def command() -> None:
    """Run one of memeval's servers: loopback test doubles (fake-cortex, mock-inference, not
    engines to evaluate) or the reference engine over MCP (mcp)."""


@command.command("fake-cortex", context_settings=_PASS_THROUGH)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def serve_fake_cortex(args: tuple[str, ...]) -> Outcome:
    """Fake CortexDB: wire semantics with keyword ranking (see --help)."""
    return _served(fake_cortex.main(list(args), prog="memeval serve fake-cortex"))


@command.command("mock-inference", context_settings=_PASS_THROUGH)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def serve_mock_inference(args: tuple[str, ...]) -> Outcome:
    """Mock OpenAI-compatible inference: hashed embeddings, extractive answers (see --help)."""
    return _served(mock_inference.main(list(args), prog="memeval serve mock-inference"))


@command.command("mcp", context_settings=_PASS_THROUGH)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def serve_mcp(args: tuple[str, ...]) -> Outcome:
    """The reference engine as an MCP server: stdio, or --http PORT (see --help)."""
    code = mcp_reference.main(list(args), prog="memeval serve mcp")
    return Outcome.USAGE if code == 2 else _served(code)


def _served(code: int) -> Outcome:
    """A server's ``main`` returns 0 after a clean stop and 3 when it could not bind."""
    return Outcome.OK if code == 0 else Outcome.ENGINE
