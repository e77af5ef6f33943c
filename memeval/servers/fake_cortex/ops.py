"""Writes, listings and scopes of the fake CortexDB (wire notes 2.1, 2.2, 2.7).

Functions take parsed JSON and return JSON-ready values; they raise
:class:`~memeval.servers.httpjson.HttpError` with the direct API's status and error code.
The direct routes and the hosted routes both call them.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from memeval.servers.fake_cortex.core import Core
from memeval.servers.fake_cortex.store import Event, rfc3339_now, within
from memeval.servers.httpjson import HttpError
from memeval.servers.mock_inference.models import approx_tokens

SCOPE_TYPES = frozenset(
    {"org", "dept", "team", "app", "user", "agent", "service", "ws", "project", "global", "system", "source"}
)
EXPERIENCE_KEYS = frozenset(
    {"scope", "modality", "idempotency_key", "content", "context", "observed_actor", "subject", "directives"}
)
MODALITIES = frozenset({"conversation", "document", "observation"})
ROLES = frozenset({"user", "assistant", "system", "tool"})
MAX_TEXT_BYTES = 1 << 20
MAX_LABELS = 64
MAX_KEY_CHARS = 64
OWNER = "user:local"


@dataclass(frozen=True)
class Receipt:
    """The outcome of one append: the event id and whether it was an idempotent replay."""

    event_id: str
    replayed: bool

    def wire(self) -> dict[str, Any]:
        return {"event_id": self.event_id, "status": "captured", "replayed_from_idempotency": self.replayed}


def require_scope(value: Any) -> str:
    """A scope given to a read: any non-empty string. Raises HttpError 422 ``INVALID_BODY``."""
    if not isinstance(value, str) or not value:
        raise HttpError(422, "INVALID_BODY", "scope is required")
    return value


def check_scope(value: Any) -> str:
    """A scope given to a write: ``type:id`` segments of registered types. Raises HttpError 422."""
    scope = require_scope(value)
    for segment in scope.split("/"):
        kind, sep, ident = segment.partition(":")
        if not sep or not ident:
            raise HttpError(422, "INVALID_BODY", f"malformed scope segment {segment!r}")
        if kind not in SCOPE_TYPES:
            raise HttpError(422, "UNREGISTERED_SCOPE_TYPE", f"scope type {kind!r} is not allowed")
    return scope


def parse_int(raw: str | None, default: int, name: str) -> int:
    """A non-negative integer query parameter. Raises HttpError 422 ``INVALID_BODY``."""
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise HttpError(422, "INVALID_BODY", f"{name} must be an integer") from None
    if value < 0:
        raise HttpError(422, "INVALID_BODY", f"{name} must not be negative")
    return value


def page_size(limit: str | None) -> int:
    """A listing's ``limit`` parameter: default 50, clamped to 1-1000. Raises HttpError 422."""
    return max(1, min(parse_int(limit, 50, "limit"), 1000))


def check_experience(body: Any, where: str = "body") -> dict[str, Any]:
    """Validate one experience body against the closed schema. Raises HttpError 422."""
    if not isinstance(body, dict):
        raise HttpError(422, "INVALID_ENVELOPE", f"{where} must be an object")
    unknown = set(body) - EXPERIENCE_KEYS
    if unknown:
        raise HttpError(422, "INVALID_ENVELOPE", f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    check_scope(body.get("scope"))
    if body.get("modality") not in MODALITIES:
        raise HttpError(422, "INVALID_ENVELOPE", f"{where}.modality must be one of {', '.join(sorted(MODALITIES))}")
    key = body.get("idempotency_key")
    if key is not None and (not isinstance(key, str) or len(key) > MAX_KEY_CHARS):
        raise HttpError(422, "INVALID_ENVELOPE", f"{where}.idempotency_key must be a string of <= 64 chars")
    _check_content(body.get("content"), where)
    _check_context(body.get("context", {}), where)
    return body


def _check_content(content: Any, where: str) -> None:
    if not isinstance(content, dict) or content.get("kind") != "message" or content.get("role") not in ROLES:
        raise HttpError(422, "INVALID_ENVELOPE", f"{where}.content must be {{kind: message, role, text}}")
    text = content.get("text")
    if not isinstance(text, str) or not text:
        raise HttpError(422, "INVALID_ENVELOPE", f"{where}.content.text is required")
    if len(text.encode()) > MAX_TEXT_BYTES:
        raise HttpError(422, "INVALID_ENVELOPE", f"{where}.content.text is over 1 MiB")


def _check_context(context: Any, where: str) -> None:
    if not isinstance(context, dict):
        raise HttpError(422, "INVALID_ENVELOPE", f"{where}.context must be an object")
    labels = context.get("labels", [])
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        raise HttpError(422, "INVALID_ENVELOPE", f"{where}.context.labels must be a list of strings")
    if len(labels) > MAX_LABELS:
        raise HttpError(422, "INVALID_ENVELOPE", f"{where}.context.labels: at most {MAX_LABELS}")
    if any(label.startswith("lang:") for label in labels):
        raise HttpError(422, "INVALID_ENVELOPE", f"{where}.context.labels: the lang: prefix is reserved")


def append_many(core: Core, bodies: list[dict[str, Any]]) -> list[Receipt]:
    """Append validated bodies in order, all or nothing on a key conflict (409)."""
    digests = [_digest(b) for b in bodies]
    store = core.store
    with store.lock:
        _check_keys(core, bodies, digests)
        receipts = [_append_one(core, b, d) for b, d in zip(bodies, digests, strict=True)]
        if not all(r.replayed for r in receipts):
            store.save()
    return receipts


def _digest(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _check_keys(core: Core, bodies: list[dict[str, Any]], digests: list[str]) -> None:
    in_batch: dict[str, str] = {}
    for body, digest in zip(bodies, digests, strict=True):
        key = body.get("idempotency_key")
        if not key:
            continue
        known = core.store.keys.get(key)
        first = known.digest if known else in_batch.setdefault(key, digest)
        if first != digest:
            raise HttpError(409, "IDEMPOTENCY_CONFLICT", f"idempotency key {key!r} was used for another body")


def _append_one(core: Core, body: dict[str, Any], digest: str) -> Receipt:
    store = core.store
    key = body.get("idempotency_key") or None
    if key and key in store.keys:
        return Receipt(store.keys[key].event_id, True)
    now = core.now()
    context = {**body.get("context", {}), "recorded_at": rfc3339_now()}
    context.setdefault("labels", [])
    event_id = store.new_id("evt")
    event = Event(
        id=event_id,
        scope=body["scope"],
        modality=body["modality"],
        content={k: body["content"][k] for k in ("kind", "role", "text")},
        context=context,
        extra={k: body[k] for k in ("observed_actor", "subject") if k in body},
        visible_at=now + core.faults.index_delay,
        key=key,
    )
    store.add_event(event, digest, enrich_at=max(event.visible_at, now + core.config.enrichment_quiet))
    store.scopes.setdefault(event.scope, {"path": event.scope, "owner": OWNER, "members": []})
    store.charge("embeddings", approx_tokens(event.text))
    return Receipt(event_id, False)


def append_bulk(core: Core, body: dict[str, Any]) -> dict[str, Any]:
    """``POST v1/experience/bulk``: ``{items, ordering}`` -> ``{accepted, results}``."""
    unknown = set(body) - {"items", "ordering"}
    if unknown:
        raise HttpError(422, "INVALID_ENVELOPE", f"unknown field(s) {', '.join(sorted(unknown))}")
    items = body.get("items")
    if not isinstance(items, list) or not items:
        raise HttpError(422, "INVALID_BODY", "items must be a non-empty list")
    for i, item in enumerate(items):
        check_experience(item, f"items[{i}]")
    receipts = append_many(core, items)
    results = [
        {"index": i, "event_id": r.event_id, "replayed_from_idempotency": r.replayed} for i, r in enumerate(receipts)
    ]
    return {"accepted": len(receipts), "results": results}


def wait_indexed(core: Core, event_ids: list[str]) -> None:
    """Block until the events are visible. Raises HttpError 408 ``WAIT_TIMEOUT`` past the cap."""
    with core.store.lock:
        due = max((core.store.events[i].visible_at for i in event_ids if i in core.store.events), default=0.0)
    wait = due - core.now()
    if core.faults.hide_listings or wait > core.config.wait_cap:
        time.sleep(core.config.wait_cap)
        raise HttpError(408, "WAIT_TIMEOUT", "not indexed within the wait cap; the write is durable")
    if wait > 0:
        time.sleep(wait)


def list_events(core: Core, scope: str, limit: str | None, labels: str | None, cursor: str | None) -> dict[str, Any]:
    """``GET v1/events``: newest first, every event twice, ``limit`` counting the copies."""
    size = page_size(limit)
    offset = parse_int(cursor, 0, "cursor")
    wanted = {label for label in (labels or "").split(",") if label}
    now = core.now()
    with core.store.lock:
        events = [
            e
            for e in reversed(core.store.events.values())
            if e.scope == scope and core.visible(e, now) and (not wanted or wanted.intersection(e.labels))
        ]
        copies = [e for e in events for _ in range(2)]
        items = [e.wire() for e in copies[offset : offset + size]]
    has_more = offset + size < len(copies)
    return {
        "items": items,
        "has_more": has_more,
        "next_cursor": str(offset + size) if has_more else None,
    }


def list_scopes(core: Core, prefix: str | None, limit: str | None) -> list[str]:
    """Scope paths holding events, sorted, under ``prefix`` (whole segments), at most 1000."""
    size = page_size(limit)
    root = (prefix or "").rstrip("/")
    with core.store.lock:
        paths = sorted({e.scope for e in core.store.events.values()})
    return [p for p in paths if not root or within(p, root)][:size]


def register_scope(core: Core, body: dict[str, Any]) -> dict[str, Any]:
    """``POST v1/scopes``: a new registration record, or 409 ``SCOPE_REGISTRATION_EXISTS``."""
    path = check_scope(body.get("path"))
    with core.store.lock:
        if path in core.store.scopes:
            raise HttpError(409, "SCOPE_REGISTRATION_EXISTS", f"{path} is registered")
        record = {"path": path, "owner": str(body.get("owner") or OWNER), "members": list(body.get("members") or [])}
        core.store.scopes[path] = record
        core.store.save()
    return dict(record)


def read_scope(core: Core, path: str | None) -> dict[str, Any]:
    """``GET v1/scopes?path=``: the registration record (scopes register on first write) or 404."""
    with core.store.lock:
        record = core.store.scopes.get(require_scope(path))
    if record is None:
        raise HttpError(404, "NOT_FOUND", f"scope {path} is not registered")
    return dict(record)


def set_members(core: Core, path: str | None, body: dict[str, Any]) -> dict[str, Any]:
    """``PUT v1/scopes/members?path=``: replace the members of a registered scope."""
    members = body.get("members")
    if not isinstance(members, list):
        raise HttpError(422, "INVALID_BODY", "members must be a list")
    with core.store.lock:
        record = read_scope(core, path)
        record["members"] = members
        core.store.scopes[record["path"]] = record
        core.store.save()
    return record
