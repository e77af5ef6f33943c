"""Forget and erasure in the fake CortexDB, traps included (wire notes 2.5, 2.6).

Forget (``POST v1/forget``), in the order the server checks:

- a selector counts only when it is exactly ``{"memory_ids": [ids]}`` with 1-100 ids; anything
  else (absent, empty, another field) means the whole scope;
- ``confirm_all: true`` with a counting selector: 400 ``AMBIGUOUS_SELECTOR_CONFIRM_ALL``;
  the whole scope without ``confirm_all: true``: 422 ``EMPTY_SELECTOR_WITHOUT_CONFIRMATION``;
- ``layers`` absent or ``[]`` means ``["events"]``; a list without ``events`` deletes nothing;
- ``cascade`` ``derived_only`` (the default) deletes the facts, beliefs and conflicts citing the
  events and KEEPS the events; ``redact_events`` deletes the events too;
- deleting by ``memory_ids`` releases the events' idempotency keys; a whole-scope forget keeps
  them (a re-sent write replays and stores nothing).

Targets are events of the exact scope. Every accepted forget or erasure drops all packs.
Erasure deletes the scope's own events (keys released) and the events of every scope below
it (keys held), with everything derived from them.
"""

from __future__ import annotations

from typing import Any

from memeval.servers.fake_cortex.core import Core
from memeval.servers.fake_cortex.ops import require_scope
from memeval.servers.fake_cortex.store import within
from memeval.servers.httpjson import HttpError

MAX_IDS = 100
CASCADES = ("derived_only", "redact_events")


def _memory_ids(selector: Any) -> list[str] | None:
    if not isinstance(selector, dict) or set(selector) != {"memory_ids"}:
        return None
    ids = selector["memory_ids"]
    if not isinstance(ids, list) or not ids:
        return None
    if len(ids) > MAX_IDS or not all(isinstance(i, str) for i in ids):
        raise HttpError(422, "INVALID_BODY", f"memory_ids must be 1-{MAX_IDS} strings")
    return ids


def _layers_and_cascade(body: dict[str, Any]) -> tuple[list[str], str]:
    layers = body.get("layers") or ["events"]
    cascade = body.get("cascade") or "derived_only"
    if not isinstance(layers, list) or cascade not in CASCADES:
        raise HttpError(422, "INVALID_BODY", f"layers must be a list and cascade one of {', '.join(CASCADES)}")
    return layers, cascade


def forget(core: Core, body: dict[str, Any]) -> dict[str, Any]:
    """``POST v1/forget`` -> ``{deleted:{events, facts, beliefs}, requested, matched}``."""
    scope = require_scope(body.get("scope"))
    ids = _memory_ids(body.get("selector"))
    confirm_all = body.get("confirm_all") is True
    if ids is not None and confirm_all:
        raise HttpError(400, "AMBIGUOUS_SELECTOR_CONFIRM_ALL", "confirm_all goes with no selector")
    if ids is None and not confirm_all:
        raise HttpError(422, "EMPTY_SELECTOR_WITHOUT_CONFIRMATION", "a whole-scope forget needs confirm_all: true")
    layers, cascade = _layers_and_cascade(body)
    store = core.store
    with store.lock:
        in_scope = {e.id: None for e in store.events.values() if e.scope == scope}
        targets = list(in_scope) if ids is None else [i for i in dict.fromkeys(ids) if i in in_scope]
        deleted = {"events": 0, "facts": 0, "beliefs": 0}
        if "events" in layers and targets:
            deleted["facts"], deleted["beliefs"] = store.remove_derived(targets)
            if cascade == "redact_events":
                deleted["events"] = store.remove_events(targets, release_keys=ids is not None)
            store.save()
        store.packs.clear()
    return {"deleted": deleted, "requested": len(ids) if ids is not None else len(targets), "matched": len(targets)}


def erase_tree(core: Core, scope: str) -> tuple[str, int]:
    """Erase ``scope`` and everything below it; (erasure id, number of scopes that held events)."""
    store = core.store
    with store.lock:
        own = [e.id for e in store.events.values() if e.scope == scope]
        below = [e.id for e in store.events.values() if e.scope != scope and within(e.scope, scope)]
        scopes = {store.events[i].scope for i in own + below}
        store.remove_derived(own + below)
        store.remove_events(own, release_keys=True)
        store.remove_events(below, release_keys=False)
        erasure_id = store.new_id("era")
        store.erasures[erasure_id] = "completed"
        store.packs.clear()
        store.save()
    return erasure_id, len(scopes)


def erase(core: Core, body: dict[str, Any]) -> dict[str, Any]:
    """``POST v1/erasures`` -> 202 body ``{erasure_id, status, receipt_url, verify_url}``."""
    scope = require_scope(body.get("scope"))
    if "selector" in body:
        raise HttpError(422, "INVALID_BODY", "an erasure takes no selector")
    if body.get("confirm_all") is not True:
        raise HttpError(422, "EMPTY_SELECTOR_WITHOUT_CONFIRMATION", "an erasure needs confirm_all: true")
    erasure_id, _ = erase_tree(core, scope)
    url = f"/v1/erasures/{erasure_id}"
    return {"erasure_id": erasure_id, "status": "completed", "receipt_url": url, "verify_url": url}


def erasure_status(core: Core, erasure_id: str) -> dict[str, Any]:
    """``GET v1/erasures/{id}`` -> ``{erasure_id, status}``, or 404."""
    with core.store.lock:
        status = core.store.erasures.get(erasure_id)
    if status is None:
        raise HttpError(404, "NOT_FOUND", f"no erasure {erasure_id}")
    return {"erasure_id": erasure_id, "status": status}
