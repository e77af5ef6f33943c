"""The settings of the ``mcp`` adapter, read and checked, and what ``memeval plan`` says of them.

Settings (one of ``command`` or ``url``):

- ``command``: argv of a server speaking MCP over stdio, started by the engine and stopped when
  it closes (``{python}`` is this interpreter); ``env`` adds variables, ``cwd`` its folder;
- ``url``: a streamable-HTTP MCP endpoint; ``headers`` go with every request to it;
- ``tools``: ``{call: tool}`` for calls whose tool is named rather than discovered, and
  ``args``: ``{tool: {argument: value}}`` fixed arguments (see :mod:`memeval.engines.mcp.tools`);
- ``answers``: ``json`` (default: every answer must be JSON, else an engine error) or ``text``
  (lines matched to the items this engine wrote, for servers that answer in prose);
- ``tenant_template``: how a memeval tenant becomes the server's tenant argument (default
  ``{tenant}``); ``timeout_s`` (default 30): the deadline of every call, ``start_timeout_s``
  (default 120) that of starting and initialising the server; ``overfetch`` (default
  4): how many times ``limit`` a search asks for when the node filter is applied here.

Secrets never sit in the definition: ``${NAME}`` in ``url``, ``headers`` and ``env`` values is
replaced by the variable ``NAME`` when the engine is built, its value is masked in every output,
and the record shows the text as written (``${NAME}``), never the value.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from memeval.engines.mcp.session import Http, Stdio
from memeval.engines.mcp.tools import CALLS
from memeval.errors import UsageError
from memeval.secrets import remember
from memeval.util.suggest import did_you_mean

SETTINGS = ("command", "url", "env", "headers", "cwd", "tools", "args", "answers", "tenant_template", "timeout_s",
            "start_timeout_s", "overfetch")
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_START_TIMEOUT_S = 120.0
DEFAULT_OVERFETCH = 4
_PLAIN = re.compile(r"[\w{}./:=@%+,-]+")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class McpConfig:
    """Checked settings; ``transport`` holds the values with ``${NAME}`` filled in, ``shown``
    the settings as written (for the run record)."""

    transport: Stdio | Http
    tools: Mapping[str, str] = field(default_factory=dict)
    args: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    answers: str = "json"
    tenant_template: str = "{tenant}"
    timeout_s: float = DEFAULT_TIMEOUT_S
    start_timeout_s: float = DEFAULT_START_TIMEOUT_S
    overfetch: int = DEFAULT_OVERFETCH
    shown: Mapping[str, Any] = field(default_factory=dict)


def read_config(settings: Mapping[str, Any], environ: Mapping[str, str]) -> McpConfig:
    """Check ``settings`` and fill ``${NAME}`` from ``environ``.

    Raises:
        UsageError: an unknown setting, a bad value, neither or both of command and url, or a
            ``${NAME}`` that is not set.
    """
    for key in settings:
        if key not in SETTINGS:
            raise UsageError(f"mcp engine: unknown setting {key!r}{did_you_mean(key, SETTINGS)}")
    if ("command" in settings) == ("url" in settings):
        raise UsageError("mcp engine: give exactly one of command (a stdio server) or url (streamable HTTP)")
    tools = _str_map(settings.get("tools", {}), "tools")
    for call in tools:
        if call not in CALLS:
            raise UsageError(f"mcp engine: tools.{call}: not a call{did_you_mean(call, CALLS)}; calls: {', '.join(CALLS)}")
    args = settings.get("args", {})
    if not isinstance(args, dict) or not all(isinstance(v, dict) for v in args.values()):
        raise UsageError("mcp engine: args must map a tool name to {argument: value}")
    answers = settings.get("answers", "json")
    if answers not in ("json", "text"):
        raise UsageError(f"mcp engine: answers must be json or text, not {answers!r}")
    template = settings.get("tenant_template", "{tenant}")
    if not isinstance(template, str) or "{tenant}" not in template:
        raise UsageError("mcp engine: tenant_template must contain {tenant}")
    return McpConfig(_transport(settings, environ), tools, args, answers, template,
                     _number(settings.get("timeout_s", DEFAULT_TIMEOUT_S), "timeout_s"),
                     _number(settings.get("start_timeout_s", DEFAULT_START_TIMEOUT_S), "start_timeout_s"),
                     int(_number(settings.get("overfetch", DEFAULT_OVERFETCH), "overfetch")),
                     {k: v for k, v in settings.items() if k in ("command", "url", "headers", "env", "cwd")})


def starts(settings: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The command the engine starts (``command``), or None for a URL; no check, no I/O."""
    command = settings.get("command")
    return tuple(str(a) for a in command) if isinstance(command, list | tuple) else None


def describe(settings: Mapping[str, Any]) -> str:
    """What ``memeval plan`` says: the transport, and the tools named or left to discovery."""
    argv = starts(settings)
    if argv is None and "url" not in settings:
        return "no server yet: give settings.command (stdio) or settings.url (streamable HTTP), or --server CMD"
    shown = " ".join(a if _PLAIN.fullmatch(a) else shlex.quote(a) for a in argv or ())
    where = f"starts `{shown}` (MCP over stdio; stopped when the run ends)" if argv else \
        f"connects to {settings['url']} (MCP over streamable HTTP)"
    named = settings.get("tools") or {}
    tools = ", ".join(f"{c}={named[c]}" for c in CALLS if c in named)
    rest = [c for c in CALLS if c not in named]
    found = f"; tools named: {tools}" if tools else ""
    return f"{where}{found}; {'/'.join(rest)} discovered from the server's tool list" if rest else f"{where}{found}"


def _transport(settings: Mapping[str, Any], environ: Mapping[str, str]) -> Stdio | Http:
    if "url" in settings:
        url = _filled(settings["url"], environ, "url")
        if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
            raise UsageError(f"mcp engine: url must be an http(s) URL, not {settings['url']!r}")
        return Http(url, {k: _filled(v, environ, f"headers.{k}") for k, v in _str_map(settings.get("headers", {}),
                                                                                         "headers").items()})
    command = settings["command"]
    if not isinstance(command, list | tuple) or not command or not all(isinstance(a, str) and a for a in command):
        raise UsageError("mcp engine: command must be a non-empty list of strings (argv)")
    argv = tuple(a.replace("{python}", sys.executable) for a in command)
    env = {k: _filled(v, environ, f"env.{k}") for k, v in _str_map(settings.get("env", {}), "env").items()}
    cwd = settings.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise UsageError("mcp engine: cwd must be a folder name")
    return Stdio(argv, env, cwd)


def _filled(text: Any, environ: Mapping[str, str], where: str) -> str:
    if not isinstance(text, str):
        raise UsageError(f"mcp engine: {where} must be a string")

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if not environ.get(name):
            raise UsageError(f"mcp engine: {where} uses ${{{name}}}, which is not set")
        remember([environ[name]])
        return environ[name]

    return _VAR.sub(value, text)


def _str_map(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise UsageError(f"mcp engine: {where} must map names to strings")
    return dict(value)


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise UsageError(f"mcp engine: {where} must be a positive number, not {value!r}")
    return float(value)
