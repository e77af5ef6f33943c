"""How memeval's tenants, nodes and items are laid out in CortexDB scopes and events, and how
CortexDB's derived records and usage read back, and the recall bodies asked for. Pure functions; no I/O.

Scopes (one leaf scope per node; every segment id matches ``[A-Za-z0-9_-]``, see
:func:`segment_id`)::

    tenant          app:tinymemory/project:<tenant>                       (the root)
    learnings       <root>/app:learnings
    source:<name>   <root>/source:<name>/app:documents
    agent:<id>      <root>/agent:<id>/app:conversations

Events: ``content.text`` is the item's text; ``modality`` is ``conversation`` (turn),
``document`` or ``observation`` (learning); ``content.role`` the speaker of a turn (``user``
otherwise); ``context.observed_at`` the item's ``at``. Labels, in order: ``tm:i:<h(id)>``
(always first), ``tm:t:<h(thread)>``, ``tm:a:<h(agent)>``, ``tm:s:<h(source)>``, where ``h`` is
16 hex of SHA-256; ``kind:<kind>``; then the item envelope, compact ASCII JSON of every field
but tenant and text, cut into ``tm:e:NN:<240 chars>`` labels, so a listing or a pack event
rebuilds the whole :class:`MemoryItem`. Events without an envelope were not written by memeval
and are skipped.

The idempotency key is ``tm3:`` + 56 hex of SHA-256 of the compact body without the key: the
same item always sends the same body and key, so a resend is a replay that stores nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from typing import Any

from memeval.engines.base import Belief, Conflict, Derived, MemoryItem, ToolCallRef, Usage
from memeval.errors import EngineError

APP = "app:tinymemory"
LEAVES = {"source": "app:documents", "agent": "app:conversations"}
LEARNINGS_LEAF = "app:learnings"
MODALITY = {"turn": "conversation", "document": "document", "learning": "observation"}
ROLES = frozenset({"user", "assistant", "system", "tool"})
MAX_LABELS = 64
SLICE = 240
MAX_EVENT_TOKENS = 768 * 1024
MAX_PACK_TOKENS = 8 * 1024 * 1024
ENVELOPE = "tm:e:"
ITEM_LABEL = "tm:i:"
_SEGMENT = re.compile(r"[A-Za-z0-9_-]{1,64}")


def short_hash(value: str, chars: int = 16) -> str:
    """The first ``chars`` hex digits of SHA-256 of ``value``."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()[:chars]


def segment_id(raw: str) -> str:
    """``raw`` as a scope segment id: itself when already ``[A-Za-z0-9_-]{1,64}``, else the
    allowed characters plus a hash of the original, so distinct names never collide."""
    if _SEGMENT.fullmatch(raw):
        return raw
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "-", raw).strip("-")[:40]
    return f"{cleaned}-{short_hash(raw, 8)}" if cleaned else f"x-{short_hash(raw, 8)}"


def tenant_root(tenant: str) -> str:
    """The root scope of a memeval tenant."""
    return f"{APP}/project:{segment_id(tenant)}"


def node_scope(tenant: str, node: str) -> str:
    """The leaf scope of one node. Raises EngineError for a node outside the layout."""
    root = tenant_root(tenant)
    if node == "learnings":
        return f"{root}/{LEARNINGS_LEAF}"
    kind, sep, name = node.partition(":")
    if sep and name and kind in LEAVES:
        return f"{root}/{kind}:{segment_id(name)}/{LEAVES[kind]}"
    raise EngineError(f"no scope layout for node {node!r} (expected learnings, source:<name> or agent:<id>)")


def selected_scopes(tenant: str, known: Iterable[str], patterns: tuple[str, ...]) -> list[str]:
    """The leaf scopes a recall over ``patterns`` reads, in pattern order: an exact node's scope
    always, a prefix pattern (``agent:``) every ``known`` scope of that kind."""
    root = tenant_root(tenant)
    chosen: dict[str, None] = {}
    for pattern in patterns:
        kind = pattern[:-1]
        if not pattern.endswith(":"):
            chosen[node_scope(tenant, pattern)] = None
        elif kind in LEAVES:
            shape = re.compile(rf"{re.escape(root)}/{kind}:[A-Za-z0-9_-]+/{LEAVES[kind]}")
            chosen.update((s, None) for s in sorted(known) if shape.fullmatch(s))
    return list(chosen)


def relative_scope(path: str) -> str:
    """A scope path as written, without the tenant prefix a hosted API adds (``org:<id>/``)."""
    at = path.find(f"/{APP}/")
    return path[at + 1:] if at >= 0 else path


def depth(scope: str) -> int:
    """Number of segments; erasures go deepest first."""
    return scope.count("/") + 1


def experience(item: MemoryItem, scope: str) -> dict[str, Any]:
    """The append body for ``item`` at ``scope``, idempotency key included.

    Raises EngineError when the item's metadata does not fit in the label budget.
    """
    context: dict[str, Any] = {"labels": labels(item)}
    if item.at:
        context["observed_at"] = item.at
    role = item.role if item.kind == "turn" and item.role in ROLES else "user"
    body: dict[str, Any] = {
        "scope": scope,
        "modality": MODALITY.get(item.kind, "observation"),
        "content": {"kind": "message", "role": role, "text": item.text},
        "context": context,
    }
    compact = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    body["idempotency_key"] = "tm3:" + hashlib.sha256(compact.encode("utf-8")).hexdigest()[:56]
    return body


def item_label(item_id: str) -> str:
    """The label that finds an item's event."""
    return ITEM_LABEL + short_hash(item_id)


def labels(item: MemoryItem) -> list[str]:
    """The event labels of ``item`` (see the module docstring)."""
    out = [item_label(item.id)]
    source = item.node.partition(":")[2] if item.node.startswith("source:") else None
    for tag, value in (("t", item.thread), ("a", item.agent), ("s", source)):
        if value:
            out.append(f"tm:{tag}:{short_hash(value)}")
    out.append(f"kind:{item.kind}")
    envelope = json.dumps(_envelope(item), separators=(",", ":"), ensure_ascii=True)
    slices = [envelope[i:i + SLICE] for i in range(0, len(envelope), SLICE)]
    if len(out) + len(slices) > MAX_LABELS or len(slices) > 99:
        raise EngineError(f"item {item.id}: metadata of {len(envelope)} bytes does not fit in {MAX_LABELS} labels")
    return out + [f"{ENVELOPE}{i:02d}:{part}" for i, part in enumerate(slices)]


def _envelope(item: MemoryItem) -> dict[str, Any]:
    fields = {"v": 1, "id": item.id, "node": item.node, "kind": item.kind, "role": item.role, "title": item.title,
              "thread": item.thread, "turn": item.turn, "agent": item.agent, "at": item.at,
              "tool_calls": [[t.name, t.id] for t in item.tool_calls], "tags": list(item.tags)}
    return {k: v for k, v in fields.items() if v not in (None, [])}


def item_of(event: Any, tenant: str) -> MemoryItem | None:
    """The item an event (listing or pack) holds, or None when it carries no memeval envelope."""
    context = obj(obj(event).get("context"))
    parts = sorted(label for label in context.get("labels") or [] if isinstance(label, str) and label.startswith(ENVELOPE))
    if not parts:
        return None
    try:
        env = json.loads("".join(label[len(ENVELOPE) + 3:] for label in parts))
        calls = tuple(ToolCallRef(str(n), str(i)) for n, i in env.get("tool_calls", []))
        return MemoryItem(tenant, env["node"], env["kind"], str((event.get("content") or {}).get("text", "")),
                          role=env.get("role", "user"), title=env.get("title"), thread=env.get("thread"),
                          turn=env.get("turn"), agent=env.get("agent"), at=env.get("at"), tool_calls=calls,
                          tags=tuple(env.get("tags", [])), id=env["id"])
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def newest_key(event: dict[str, Any]) -> tuple[float, float]:
    """Sort key for "newest first" (use ``reverse=True``): observed time, then recorded time, in
    epoch seconds (0 when missing or unreadable)."""
    context = obj(event.get("context"))
    recorded = _epoch_s(context.get("recorded_at"))
    return (_epoch_s(context["observed_at"]) if context.get("observed_at") else recorded), recorded


def _epoch_s(value: Any) -> float:
    try:
        stamp = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)).timestamp()


def obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


class ShapeError(EngineError):
    """A 2xx answer whose JSON is not the shape the API promises (a list where records belong…)."""


def records(body: Any, *keys: str) -> list[dict[str, Any]]:
    """The record list of a listing body under the first of ``keys`` present (``items`` too).

    Raises:
        ShapeError: ``body`` is not an object holding a list of objects under one of the keys
            (an answer that cannot be read is an engine error, never an empty listing).
    """
    if isinstance(body, dict):
        for key in (*keys, "items"):
            value = body.get(key)
            if isinstance(value, list) and all(isinstance(r, dict) for r in value):
                return value
    names = " or ".join(repr(k) for k in (*keys, "items"))
    raise ShapeError(f"the answer holds no list of records under {names} ({type(body).__name__})")


def part(value: Any) -> str:
    """A claim part as text: a string, or an object's ``name`` / ``value`` / ``id``."""
    if isinstance(value, dict):
        for key in ("name", "value", "id"):
            if value.get(key) is not None:
                return str(value[key])
        return ""
    return "" if value is None else str(value)


def fact_of(record: dict[str, Any]) -> Belief:
    """A fact record ``{subject, predicate, object}`` as a supported claim without confidence."""
    return Belief(part(record.get("subject")), part(record.get("predicate")), part(record.get("object")))


def belief_of(record: dict[str, Any]) -> Belief | None:
    """A belief record; None for a stance other than supported or contested."""
    stance = str(record.get("stance") or "supported")
    if stance not in ("supported", "contested"):
        return None
    claim = obj(record.get("claim")) or record
    confidence = record.get("confidence")
    return Belief(part(claim.get("subject")), part(claim.get("predicate")), part(claim.get("object")), stance,
                  float(confidence) if isinstance(confidence, (int, float)) else None)


def conflict_of(record: dict[str, Any]) -> Conflict:
    """A conflict record ``{kind, status, subject, predicate, records: [{object}]}``."""
    objects = tuple(part(r.get("object")) for r in record.get("records") or [] if isinstance(r, dict))
    return Conflict(str(record.get("kind") or ""), str(record.get("status") or ""), part(record.get("subject")),
                    part(record.get("predicate")), objects)


def derived_of(facts: list[dict[str, Any]], beliefs: list[dict[str, Any]], conflicts: list[dict[str, Any]]) -> Derived:
    """Listed fact, belief and conflict records as Derived (beliefs that are not live dropped)."""
    held = (belief_of(b) for b in beliefs)
    return Derived(tuple(fact_of(f) for f in facts), tuple(b for b in held if b is not None),
                   tuple(conflict_of(c) for c in conflicts))


def usage_of(body: dict[str, Any]) -> Usage:
    """``v1/admin/usage`` as Usage: ``total.{calls, tokens_total, cost_usd}`` and USD per role
    from ``by_role`` (or ``roles`` / ``cost_by_role``), each a number or ``{cost_usd}``."""
    total = obj(body.get("total"))
    cost = total.get("cost_usd")
    roles = next((obj(body[k]) for k in ("by_role", "roles", "cost_by_role") if isinstance(body.get(k), dict)), {})
    by_role = {str(r): float(v.get("cost_usd") or 0.0) if isinstance(v, dict) else float(v)
               for r, v in roles.items() if isinstance(v, (dict, int, float))}
    return Usage(int(total.get("calls") or 0), int(total.get("tokens_total") or total.get("tokens") or 0),
                 float(cost) if isinstance(cost, (int, float)) else None, by_role)


def pack_request(scope: str, query: str, include: Sequence[str], limits: dict[str, int]) -> dict[str, Any]:
    """A granular recall body over ``include`` with per-layer ``limits`` and a token budget to match."""
    tokens = min(max(1, sum(limits.values())) * MAX_EVENT_TOKENS, MAX_PACK_TOKENS)
    layers = {layer: limits.get(layer, 0) for layer in ("events", "facts", "beliefs", "episodes", "understanding")}
    return {"scope": scope, "query": query, "view": "granular", "include": list(include),
            "budgets": {"max_tokens": tokens, "per_layer_limits": layers}}
