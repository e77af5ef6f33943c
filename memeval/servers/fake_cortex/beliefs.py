"""Belief building and the derived-layer listings of the fake CortexDB (wire notes 2.8).

``POST v1/beliefs/build {scope}`` works within the request on the facts enrichment already
derived for that exact scope and not yet built, oldest first. Each fact gives one belief
(stance ``supported``, confidence 0.9, ``valid_from`` = its event's ``recorded_at``), except a
fact repeating a live belief's claim (counted in ``reasons.duplicate_claim``). When live
beliefs hold another object for the same subject and predicate (compared case-insensitively),
the bitemporal mode decides:

- ``shadow`` (default): the older beliefs become ``contested`` and an open ``value_conflict``
  is recorded. CortexDB's own shadow mode was seen raising none with real models; the fake
  records and lists them so conflict probes have something to read.
- ``enforce``: the older beliefs become ``superseded`` (no longer live) and the conflict is
  recorded.
- ``off``: the older beliefs become ``contested``, no conflict is recorded, and
  ``GET v1/conflicts`` answers 503.

Listings (``GET v1/facts``, ``v1/beliefs``, ``v1/conflicts``) include scopes below ``scope``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from memeval.servers.fake_cortex.core import Core
from memeval.servers.fake_cortex.ops import page_size, require_scope
from memeval.servers.fake_cortex.store import Belief, Conflict, Fact, Store, rfc3339_now, within
from memeval.servers.httpjson import HttpError

LIVE = ("supported", "contested")
CONFIDENCE = 0.9


def build_beliefs(core: Core, scope: str) -> dict[str, Any]:
    """Build beliefs from the scope's unbuilt facts; the ``v1/beliefs/build`` response body."""
    mode = core.config.bitemporal_mode
    store = core.store
    with store.lock:
        events_scanned = sum(1 for e in store.events.values() if e.scope == scope)
        pending = [f for f in store.facts if f.scope == scope and not f.built]
        reasons: Counter[str] = Counter()
        built = 0
        for fact in pending:
            fact.built = True
            reason = _build_one(store, fact, mode)
            if reason:
                reasons[reason] += 1
            else:
                built += 1
        if pending:
            store.charge("belief_building", 50 * len(pending), units=len(pending))
            store.save()
    return {
        "built": built,
        "items": [],
        "facts_scanned": len(pending),
        "events_scanned": events_scanned,
        "reasons": dict(reasons),
    }


def _build_one(store: Store, fact: Fact, mode: str) -> str | None:
    """Add the fact's belief; the reason it was skipped, or None."""
    if not fact.subject or not fact.predicate:
        return "no_subject_or_predicate"
    key = (fact.subject.casefold(), fact.predicate.casefold())
    rivals = [
        b
        for b in store.beliefs
        if b.scope == fact.scope and b.stance in LIVE and (b.subject.casefold(), b.predicate.casefold()) == key
    ]
    if any(b.object.casefold() == fact.object.casefold() for b in rivals):
        return "duplicate_claim"
    for old in rivals:
        old.stance = "superseded" if mode == "enforce" else "contested"
    if rivals and mode != "off":
        store.conflicts.append(
            Conflict(
                id=store.new_id("conflict"),
                scope=fact.scope,
                subject=fact.subject,
                predicate=fact.predicate,
                objects=[b.object for b in rivals] + [fact.object],
                sources=[b.source_event for b in rivals] + [fact.source_event],
            )
        )
    event = store.events.get(fact.source_event)
    valid_from = str(event.context.get("recorded_at")) if event else rfc3339_now()
    store.beliefs.append(
        Belief(
            id=store.new_id("blf"),
            scope=fact.scope,
            subject=fact.subject,
            predicate=fact.predicate,
            object=fact.object,
            stance="supported",
            confidence=CONFIDENCE,
            valid_from=valid_from,
            source_event=fact.source_event,
        )
    )
    return None


def _listing(core: Core, layer: Callable[[Store], list[Any]], scope: str | None, limit: str | None) -> dict[str, Any]:
    """``{items, has_more}``: the first page of ``layer``'s records at or below ``scope``, oldest first."""
    root = require_scope(scope)
    size = page_size(limit)
    with core.store.lock:
        records = [r for r in layer(core.store) if within(r.scope, root)]
        return {"items": [r.wire() for r in records[:size]], "has_more": len(records) > size}


def list_facts(core: Core, scope: str | None, limit: str | None) -> dict[str, Any]:
    """``GET v1/facts`` -> ``{items, has_more}``, oldest first."""
    return _listing(core, lambda store: store.facts, scope, limit)


def list_beliefs(core: Core, scope: str | None, limit: str | None) -> dict[str, Any]:
    """``GET v1/beliefs`` -> ``{items, has_more}``, oldest first, every stance."""
    return _listing(core, lambda store: store.beliefs, scope, limit)


def list_conflicts(core: Core, scope: str | None, limit: str | None) -> dict[str, Any]:
    """``GET v1/conflicts`` -> ``{items, has_more}``. Raises HttpError 503 when bitemporal is off."""
    if core.config.bitemporal_mode == "off":
        raise HttpError(503, "BITEMPORAL_DISABLED", "conflicts need CORTEX_BITEMPORAL_MODE shadow or enforce")
    return _listing(core, lambda store: store.conflicts, scope, limit)
