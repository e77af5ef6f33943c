"""The engine boundary: what memeval needs from a memory system, and nothing more.

An adapter is found through an entry point of the ``memeval.engines`` group, which names an
:class:`Adapter`: the factory that builds the engine from its settings, and, for an engine
behind a server, the environment variable the adapter reads that server's URL from
(``url_env``). ``memeval run`` starts the server an engine definition describes only when that
variable is unset, and a sweep hands each run its started server through it.

Every engine implements the core :class:`Engine` protocol: ``info``, ``write``, a paged
listing (``page``), ``recall``, ``forget`` and ``close``. Anything more is a capability an
adapter has by implementing its protocol, never by a stub that raises:

- ``forget``: :class:`Engine` itself (part of the core, so every engine can forget);
- ``erase``: :class:`Erases`; ``answer``: :class:`Answers`; ``beliefs``: :class:`BuildsBeliefs`;
- ``inspect``: :class:`Inspects` (facts, beliefs and conflicts derived so far);
- ``usage``: :class:`ReportsUsage`; ``backlog``: :class:`HasBacklog` (the enrichment queue);
- ``conflicts``: :class:`ReportsConflicts` (an engine without it raises no conflicts, so
  conflict KPIs stay null rather than read 0).

:func:`capabilities_of` derives the :class:`Capability` set from the protocols an engine
implements; ``EngineInfo.capabilities`` holds exactly that set (the conformance kit,
:mod:`memeval.engines.conformance`, checks it). A probe that needs a capability the engine
lacks is reported as *unsupported*.

Node names place an item inside its tenant: ``learnings``, ``source:<name>`` (documents) and
``agent:<id>`` (one agent's turns). A :class:`RecallRequest` selects nodes by exact name or by a
prefix ending in ``:`` (``agent:`` = every agent).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable


class Capability(StrEnum):
    """What an engine can do beyond storing, listing and recalling (see the module docstring)."""

    FORGET = "forget"
    ERASE = "erase"
    ANSWER = "answer"
    BELIEFS = "beliefs"
    INSPECT = "inspect"
    USAGE = "usage"
    BACKLOG = "backlog"
    CONFLICTS = "conflicts"


@dataclass(frozen=True)
class ToolCallRef:
    """A tool call as memory keeps it: its name and id, never its result."""

    name: str
    id: str


@dataclass(frozen=True)
class MemoryItem:
    """One stored unit: a conversation turn, a document or a learning.

    ``at`` is an RFC 3339 UTC timestamp (``2026-09-01T09:00:00Z``) or None when undated.
    ``id`` is a content fingerprint (see :func:`fingerprint`), so writing the same item twice is
    a replay that stores nothing.
    """

    tenant: str
    node: str
    kind: str  # "turn" | "document" | "learning"
    text: str
    role: str = "user"
    title: str | None = None
    thread: str | None = None
    turn: int | None = None
    agent: str | None = None
    at: str | None = None
    tool_calls: tuple[ToolCallRef, ...] = ()
    tags: tuple[str, ...] = ()
    id: str = ""

    def __post_init__(self) -> None:
        if not self.id:
            object.__setattr__(self, "id", fingerprint(self))

    def to_json(self) -> dict[str, Any]:
        """A plain dict for run.json and wire bodies."""
        out = asdict(self)
        out["tool_calls"] = [asdict(t) for t in self.tool_calls]
        out["tags"] = list(self.tags)
        return out


def fingerprint(item: MemoryItem) -> str:
    """SHA-256 (hex, 32 chars) of the item's content, excluding its id.

    Two writes of equal content get the same id, which is what makes a retried write a replay.
    The fields are serialised positionally (``dataclasses.asdict`` would cost more than the
    hash itself on the write path).
    """
    body = [item.tenant, item.node, item.kind, item.text, item.role, item.title, item.thread, item.turn,
            item.agent, item.at, [[t.name, t.id] for t in item.tool_calls], list(item.tags)]
    raw = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class WriteReceipt:
    """What a write returns: the stored item's id, and whether the write was a replay."""

    id: str
    replayed: bool = False


@dataclass(frozen=True)
class ListPage:
    """One page of a tenant listing; ``cursor`` is None on the last page."""

    items: tuple[MemoryItem, ...]
    cursor: str | None = None


@dataclass(frozen=True)
class RecallRequest:
    """A ranked recall inside one tenant.

    ``nodes`` are exact node names or prefixes ending in ``:``. ``query`` None means "newest
    first". ``limit`` is the number of hits wanted. ``prefer_recent`` lets the engine use
    recency as a ranking signal so a newer value can come before a superseded one.
    """

    tenant: str
    nodes: tuple[str, ...]
    query: str | None
    limit: int
    prefer_recent: bool = True


@dataclass(frozen=True)
class Hit:
    """A recalled item and the engine's score for it (higher is better; scale is the engine's)."""

    item: MemoryItem
    score: float


@dataclass(frozen=True)
class BuildReceipt:
    """The outcome of a belief build: how many beliefs were built (None when the engine did not
    say, e.g. a queued build), and the engine's status."""

    built: int | None
    outcome: str = "done"  # done | started | scheduled | skipped


@dataclass(frozen=True)
class Belief:
    """A derived claim. ``stance`` is ``supported`` or ``contested``; confidence in [0, 1]."""

    subject: str
    predicate: str
    object: str
    stance: str = "supported"
    confidence: float | None = None

    def line(self) -> str:
        """``s p o (stance, conf)``, the form the captured check reads."""
        conf = "" if self.confidence is None else f", {self.confidence:.2f}"
        return f"{self.subject} {self.predicate} {self.object} ({self.stance}{conf})"


@dataclass(frozen=True)
class Conflict:
    """A conflict the engine raised: subject and predicate with the disagreeing objects."""

    kind: str
    status: str
    subject: str
    predicate: str
    objects: tuple[str, ...]

    def line(self) -> str:
        """``kind status: subj pred [a | b]``."""
        return f"{self.kind} {self.status}: {self.subject} {self.predicate} [{' | '.join(self.objects)}]"


@dataclass(frozen=True)
class Derived:
    """Derived layers read off an engine after synthesis."""

    facts: tuple[Belief, ...] = ()
    beliefs: tuple[Belief, ...] = ()
    conflicts: tuple[Conflict, ...] = ()


@dataclass(frozen=True)
class Usage:
    """Model usage an engine accounted for. ``cost_usd`` None means the engine gave no price."""

    calls: int = 0
    tokens: int = 0
    cost_usd: float | None = None
    by_role: dict[str, float] = field(default_factory=dict)

    def minus(self, before: "Usage") -> "Usage":
        """The usage between two snapshots."""
        cost = None
        if self.cost_usd is not None and before.cost_usd is not None:
            cost = round(self.cost_usd - before.cost_usd, 6)
        roles = {k: round(v - before.by_role.get(k, 0.0), 6) for k, v in self.by_role.items()}
        return Usage(self.calls - before.calls, self.tokens - before.tokens, cost, roles)


@dataclass(frozen=True)
class EngineInfo:
    """Who the engine is. ``settings`` must never hold a secret (adapters drop keys)."""

    name: str
    version: str
    capabilities: frozenset[Capability]
    server_version: str | None = None
    server_capabilities: tuple[str, ...] = ()
    flags: dict[str, str] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A plain dict for run.json."""
        return {
            "name": self.name,
            "version": self.version,
            "capabilities": sorted(str(c) for c in self.capabilities),
            "server_version": self.server_version,
            "server_capabilities": list(self.server_capabilities),
            "flags": dict(self.flags),
            "settings": dict(self.settings),
        }


@runtime_checkable
class Engine(Protocol):
    """The core every adapter implements.

    Methods raise :class:`memeval.errors.EngineError` with a one-line reason on failure; a
    failure is never an empty result.
    """

    def info(self) -> EngineInfo:
        """Name, version, capabilities (``capabilities_of(self)``); may contact the server once."""

    def write(self, item: MemoryItem) -> WriteReceipt:
        """Store one item (accepted, maybe not yet listed). Idempotent by ``item.id``."""

    def page(self, tenant: str, cursor: str | None = None, limit: int = 100) -> ListPage:
        """A page of at most ``limit`` items visible in ``tenant``, newest first; following the
        cursors returns each item once. ``cursor`` is one this engine handed out (else EngineError)."""

    def recall(self, request: RecallRequest) -> list[Hit]:
        """Ranked hits, best first, at most ``request.limit``, only from the requested nodes."""

    def forget(self, tenant: str, ids: tuple[str, ...]) -> int:
        """Remove items (and everything derived from them) from recall and listing; returns how
        many the engine removed (its own count, e.g. events)."""

    def close(self) -> None:
        """Release connections and files."""


@runtime_checkable
class Erases(Protocol):
    """Capability ``erase``."""

    def erase(self, tenant: str) -> None:
        """Remove everything stored under ``tenant``; afterwards it lists and recalls nothing."""


@runtime_checkable
class Answers(Protocol):
    """Capability ``answer``."""

    def answer(self, tenant: str, question: str, nodes: tuple[str, ...], limit: int) -> str:
        """A grounded prose answer over the given nodes, from at most ``limit`` memories."""


@runtime_checkable
class BuildsBeliefs(Protocol):
    """Capability ``beliefs``."""

    def build_beliefs(self, tenant: str) -> BuildReceipt:
        """Build beliefs over the tenant."""


@runtime_checkable
class Inspects(Protocol):
    """Capability ``inspect``."""

    def inspect(self, tenant: str) -> Derived:
        """Facts, beliefs and conflicts derived so far."""


@runtime_checkable
class ReportsUsage(Protocol):
    """Capability ``usage``."""

    def usage(self) -> Usage:
        """Model usage so far, over every tenant."""


@runtime_checkable
class HasBacklog(Protocol):
    """Capability ``backlog``."""

    def backlog(self) -> int:
        """Enrichment jobs still pending (0: nothing left to enrich). Raises EngineError when
        the engine cannot tell."""


@runtime_checkable
class ReportsConflicts(Protocol):
    """Capability ``conflicts``: the engine raises conflicts, so none raised means none found."""

    def conflicts(self, tenant: str) -> tuple[Conflict, ...]:
        """The conflicts raised in ``tenant`` so far (the same ones ``inspect`` reports)."""


@runtime_checkable
class WritesBatch(Protocol):
    """Optional: many writes in one call (a benchmark's haystack is thousands of turns). Not a
    capability a suite can require: a run writes one item at a time to an engine without it."""

    def write_many(self, items: Sequence[MemoryItem]) -> list[WriteReceipt]:
        """Store ``items`` in order, as :meth:`Engine.write` would one by one; one receipt each."""


CORE_METHODS = ("info", "write", "page", "recall", "forget", "close")
"""The methods of the core :class:`Engine` protocol, for messages naming the one missing."""


def missing_core(engine: object) -> tuple[str, ...]:
    """The core methods ``engine`` lacks (empty for an :class:`Engine`)."""
    return tuple(m for m in CORE_METHODS if not callable(getattr(engine, m, None)))


PROTOCOLS: dict[Capability, type] = {
    Capability.ERASE: Erases,
    Capability.ANSWER: Answers,
    Capability.BELIEFS: BuildsBeliefs,
    Capability.INSPECT: Inspects,
    Capability.USAGE: ReportsUsage,
    Capability.BACKLOG: HasBacklog,
    Capability.CONFLICTS: ReportsConflicts,
}
"""The protocol behind each optional capability (``forget`` is in the core)."""


def capabilities_of(engine: Engine) -> frozenset[Capability]:
    """The capabilities ``engine`` has: ``forget``, plus one per capability protocol it implements."""
    return frozenset({Capability.FORGET} | {cap for cap, proto in PROTOCOLS.items() if isinstance(engine, proto)})


@dataclass(frozen=True)
class Adapter:
    """What a ``memeval.engines`` entry point names.

    ``create`` builds the engine from an engine definition's settings (raising UsageError for a
    bad one). ``url_env`` is set by adapters of an engine behind a server: the environment
    variable the adapter reads the server's URL from when ``settings`` has no ``url``. When it
    is set memeval starts no server; when memeval starts one it passes ``{"url": ...}`` in the
    settings (``memeval run``) or sets the variable (a sweep's run processes). ``concurrent``:
    one engine it creates may be called from several threads at once (``memeval run --jobs N``
    runs scenarios on N threads only for such adapters).

    ``starts`` is set by adapters whose engine itself starts a process its settings name (an
    MCP server over stdio): it returns that argv (None: none), so memeval can refuse a
    definition it must not trust and ``plan`` can show the command. ``describe`` says, from
    the settings alone (no I/O), what the engine will connect to and how, for ``plan``.

    What a run checks before anything starts (:mod:`memeval.runner.preflight`): ``extras`` are the
    (module, extra) pairs the engine imports, found without importing them; ``keys`` the
    environment variables that must be set.
    """

    create: Callable[[Mapping[str, Any]], Engine]
    url_env: str | None = None
    concurrent: bool = False
    starts: Callable[[Mapping[str, Any]], tuple[str, ...] | None] | None = None
    describe: Callable[[Mapping[str, Any]], str] | None = None
    extras: tuple[tuple[str, str], ...] = ()
    keys: tuple[str, ...] = ()


def node_matches(node: str, patterns: tuple[str, ...]) -> bool:
    """True when ``node`` equals a pattern, or starts with a pattern that ends in ``:``."""
    return any(node == p or (p.endswith(":") and node.startswith(p)) for p in patterns)
