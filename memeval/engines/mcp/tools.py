"""Which of an MCP server's tools serves which engine call, and which argument takes what.

Calls: ``write`` (store one memory), ``recall`` (search), ``list`` (page through a tenant),
``forget`` (delete by id) and ``erase`` (empty a tenant). The engine definition may name the
tool of any call (``tools: {write: remember}``); the others are discovered: a tool serves a
call when a word of its name (else of its description) says so (:data:`CALL_WORDS`) and its
required arguments can all be filled. Among several, one whose name speaks of memory wins, then
the shorter name, then the first listed. ``write`` and ``recall`` must be found; a missing
``forget`` means the engine cannot forget (forgetting probes are unsupported), a missing
``list`` that listings come from the engine's own log of accepted writes, a missing ``erase``
that the engine lacks the ``erase`` capability.

Arguments are found by name (:data:`ROLE_NAMES`); ``args: {tool: {argument: value}}`` in the
definition adds fixed values (a ``reason`` a delete tool requires, say).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memeval.engines.mcp.session import ToolSpec
from memeval.errors import UsageError

CALLS = ("write", "recall", "list", "forget", "erase")
CALL_WORDS = {
    "write": ("add", "ingest", "remember", "store", "save", "insert", "write", "create"),
    "recall": ("search", "recall", "query", "retrieve", "find"),
    "list": ("list", "dump", "browse"),
    "forget": ("delete", "forget", "remove"),
    "erase": ("erase", "clear", "wipe", "purge", "reset"),
}
ROLE_NAMES = {
    "text": ("text", "content", "memory", "message", "fact", "data", "body", "note"),
    "tenant": ("tenant", "tenant_id", "user_id", "namespace", "scope", "collection", "user", "project"),
    "metadata": ("metadata", "meta"),
    "query": ("query", "q", "question", "search", "topic", "text"),
    "limit": ("limit", "top_k", "k", "max_results", "n", "count", "size"),
    "nodes": ("nodes",),
    "prefer_recent": ("prefer_recent",),
    "cursor": ("cursor", "page_token", "offset", "after"),
    "ids": ("ids", "memory_ids", "episode_ids", "event_ids"),
    "id": ("id", "memory_id", "episode_id", "event_id"),
}
ROLES = {  # (roles that must be found, roles used when found)
    "write": (("text",), ("tenant", "metadata")),
    "recall": (("query",), ("tenant", "limit", "nodes", "prefer_recent")),
    "list": ((), ("tenant", "limit", "cursor")),
    "forget": ((), ("ids", "id", "tenant")),
    "erase": (("tenant",), ()),
}
_TYPES = {"metadata": "object", "ids": "array", "nodes": "array", "limit": "integer"}
_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class Binding:
    """The tool serving one call: its name, the argument name of each role it takes, and the
    fixed arguments the definition adds."""

    call: str
    tool: str
    args: Mapping[str, str]
    fixed: Mapping[str, Any] = field(default_factory=dict)
    query_required: bool = True

    def describe(self) -> str:
        """``tool(role=argument, ...)``, the form plan and the run record show."""
        inner = ", ".join(f"{role}={arg}" for role, arg in self.args.items())
        return f"{self.tool}({inner})"


def bind(tools: Sequence[ToolSpec], named: Mapping[str, str],
         fixed: Mapping[str, Mapping[str, Any]]) -> dict[str, Binding]:
    """The binding of every call the server can serve (see the module docstring).

    Raises:
        UsageError: a named tool is not on the server or cannot serve its call, or no tool
            serves ``write`` or ``recall`` (the message lists the server's tools).
    """
    by_name = {t.name: t for t in tools}
    found: dict[str, Binding] = {}
    for call in CALLS:
        if call in named:
            tool = by_name.get(named[call])
            if tool is None:
                raise UsageError(f"mcp engine: tools.{call} names {named[call]!r}, which the server does not list; "
                                 f"it lists {', '.join(sorted(by_name)) or 'no tools'}")
            binding = _binding(call, tool, fixed.get(tool.name, {}))
            if binding is None:
                raise UsageError(f"mcp engine: tool {tool.name} cannot serve {call}: {_why(call, tool, fixed)}")
        else:
            binding = _discover(call, tools, fixed, {b.tool for b in found.values()})
        if binding is not None:
            found[call] = binding
    for call in ("write", "recall"):
        if call not in found:
            raise UsageError(f"mcp engine: no tool of the server serves {call} (name it under tools:); "
                             f"it lists {', '.join(sorted(by_name)) or 'no tools'}")
    return found


def _discover(call: str, tools: Sequence[ToolSpec], fixed: Mapping[str, Mapping[str, Any]],
              taken: set[str]) -> Binding | None:
    for source in ("name", "description"):
        candidates = [t for t in tools if t.name not in taken and _says(call, t, source)]
        bound = [(t, b) for t in candidates if (b := _binding(call, t, fixed.get(t.name, {}))) is not None]
        if bound:
            bound.sort(key=lambda tb: ("mem" not in tb[0].name.lower(), len(tb[0].name)))
            return bound[0][1]
    return None


def _says(call: str, tool: ToolSpec, source: str) -> bool:
    text = tool.name if source == "name" else tool.description
    words = set(_WORD.findall(re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower()))
    return any(w in words for w in CALL_WORDS[call])


def _binding(call: str, tool: ToolSpec, fixed: Mapping[str, Any]) -> Binding | None:
    """The binding of ``tool`` for ``call``, or None when a needed role or a required argument
    is missing."""
    must, may = ROLES[call]
    args: dict[str, str] = {}
    for role in (*must, *may):
        arg = _argument(role, tool, set(args.values()) | set(fixed))
        if arg is not None:
            args[role] = arg
    if any(role not in args for role in must) or (call == "forget" and not ({"ids", "id"} & set(args))):
        return None
    if call == "forget" and "ids" in args:
        args.pop("id", None)
    if any(r not in args.values() and r not in fixed for r in tool.required):
        return None
    query_required = call == "recall" and args["query"] in tool.required
    return Binding(call, tool.name, args, dict(fixed), query_required)


def _argument(role: str, tool: ToolSpec, used: set[str]) -> str | None:
    for name in ROLE_NAMES[role]:
        if name in tool.properties and name not in used and _typed(role, tool.properties[name]):
            return name
    return None


def _typed(role: str, schema: Any) -> bool:
    """Whether an argument's schema admits the role's type (an untyped one admits anything)."""
    want = _TYPES.get(role)
    if want is None or not isinstance(schema, dict):
        return True
    types = [schema.get("type")] + [s.get("type") for s in schema.get("anyOf", []) if isinstance(s, dict)]
    return want in types or all(t is None for t in types)


def _why(call: str, tool: ToolSpec, fixed: Mapping[str, Mapping[str, Any]]) -> str:
    must, _ = ROLES[call]
    wanted = "an ids or id argument" if call == "forget" else \
        ", ".join(f"{r} ({' | '.join(ROLE_NAMES[r])})" for r in must) or "nothing"
    unfilled = [r for r in tool.required if r not in fixed.get(tool.name, {})]
    return f"it needs {wanted}; its required arguments are {', '.join(unfilled) or 'none'}" + \
        " (fixed values go under args:)"
