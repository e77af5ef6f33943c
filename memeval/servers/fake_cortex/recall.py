"""Recall packs and answers of the fake CortexDB (wire notes 2.3, 2.4).

This is not a model of retrieval quality. An item's score is the number of distinct query
words (lower-cased runs of letters and digits, 3+ characters) its lower-cased text contains;
items scoring zero are dropped when the query has words; ties keep storage order (oldest
first). With no query words, newest first. With ``CORTEX_SALIENCE_WEIGHT`` above 0.2, the
i-th of n candidates (oldest first) gains ``min(weight, 0.9) * i / n``: newer events win ties,
never a whole word. Events are scored on their text, facts and beliefs on
``subject predicate object``.

Views: ``granular`` = the exact scope, ``descend`` = the scope and every scope below it,
``holistic`` (the default) = those plus the scope's ancestors. ``temporal`` is accepted (and
ignored: it only boosts in CortexDB) when the ``refers_to_v1`` capability is on, else 422.
``budgets.max_tokens`` is accepted but nothing is truncated. On the ``0.12`` wire
(``--wire 0.12``) a recall may also carry ``diagnostics`` (``none`` | ``summary`` | ``full``;
no side-table is built) and the pack carries ``context_block``: its events rendered as text.

Answers are extractive, not generated: the first sentence of each pack event, in pack order,
joined with spaces, cut at 600 characters; ``unknown`` for an empty pack.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from memeval.servers.fake_cortex.core import Core
from memeval.servers.fake_cortex.ops import require_scope
from memeval.servers.fake_cortex.store import Belief, Fact, Pack, within
from memeval.servers.httpjson import HttpError
from memeval.servers.mock_inference.models import approx_tokens

RECALL_KEYS = frozenset({"scope", "query", "budgets", "view", "include", "temporal", "filters"})
NEWER_RECALL_KEYS = frozenset({"diagnostics"})  # the 0.12 wire (see cortex_config.WIRES)
DIAGNOSTICS = ("none", "summary", "full")
VIEWS = ("granular", "descend", "holistic")
LAYERS = ("events", "facts", "beliefs", "episodes", "understanding")
DEFAULT_LAYER_LIMIT = 20
SALIENCE_THRESHOLD = 0.2
ANSWER_CHARS = 600
ANSWER_MODEL = "fake-extractive"

T = TypeVar("T")
_WORD = re.compile(r"[a-z0-9]+")
_FIRST_SENTENCE = re.compile(r"(?<=[.!?])\s|\n")


def query_words(query: str) -> list[str]:
    """The distinct scoring words of a query, in order of first appearance."""
    return list(dict.fromkeys(w for w in _WORD.findall(query.lower()) if len(w) >= 3))


def rank(items: Sequence[T], text_of: Callable[[T], str], words: list[str], salience: float) -> list[T]:
    """Order ``items`` (given oldest first) by the module's scoring rule."""
    if not words:
        return list(reversed(items))
    boost = min(salience, 0.9) if salience > SALIENCE_THRESHOLD else 0.0
    scored = []
    for i, item in enumerate(items):
        text = text_of(item).lower()
        hits = sum(1 for w in words if w in text)
        if hits:
            scored.append((hits + boost * (i + 1) / len(items), i, item))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [item for _, _, item in scored]


def in_view(scope: str, root: str, view: str) -> bool:
    """Whether records of ``scope`` belong to a ``view`` pack built for ``root``."""
    if view == "granular":
        return scope == root
    if view == "descend":
        return within(scope, root)
    return within(scope, root) or within(root, scope)


def _options(core: Core, body: dict[str, Any]) -> tuple[str, set[str], dict[str, int], set[str]]:
    unknown = set(body) - RECALL_KEYS - (NEWER_RECALL_KEYS if core.config.wire != "0.10" else set())
    if unknown:
        raise HttpError(422, "INVALID_BODY", f"unknown recall field(s) {', '.join(sorted(unknown))}")
    if body.get("diagnostics", "none") not in DIAGNOSTICS:
        raise HttpError(422, "INVALID_BODY", f"diagnostics must be one of {', '.join(DIAGNOSTICS)}")
    view = body.get("view") or "holistic"
    if view not in VIEWS:
        raise HttpError(422, "INVALID_BODY", f"view must be one of {', '.join(VIEWS)}")
    if body.get("temporal") is not None and "refers_to_v1" not in core.config.capabilities:
        raise HttpError(422, "INVALID_BODY", "temporal needs the refers_to_v1 capability")
    include = body.get("include") or list(LAYERS)
    if not isinstance(include, list) or not isinstance(body.get("query") or "", str):
        raise HttpError(422, "INVALID_BODY", "include must be a list and query a string")
    limits = ((body.get("budgets") or {}).get("per_layer_limits")) or {}
    if not isinstance(limits, dict) or not all(isinstance(v, int) and v >= 0 for v in limits.values()):
        raise HttpError(422, "INVALID_BODY", "budgets.per_layer_limits must map layers to counts")
    labels = ((body.get("filters") or {}).get("metadata") or {}).get("labels") or []
    if not isinstance(labels, list):
        raise HttpError(422, "INVALID_BODY", "filters.metadata.labels must be a list")
    return view, set(include), {k: limits.get(k, DEFAULT_LAYER_LIMIT) for k in LAYERS}, set(labels)


def recall(core: Core, body: dict[str, Any]) -> dict[str, Any]:
    """``POST v1/recall``: build, store and return a pack."""
    scope = require_scope(body.get("scope"))
    view, include, limits, labels = _options(core, body)
    words = query_words(body.get("query") or "")
    salience = core.config.salience_weight
    store, now = core.store, core.now()
    with store.lock:
        events = [
            e
            for e in store.events.values()
            if in_view(e.scope, scope, view) and core.visible(e, now) and (not labels or labels.intersection(e.labels))
        ]
        ranked = rank(events, lambda e: e.text, words, salience)[: limits["events"]] if "events" in include else []
        facts = [f for f in store.facts if in_view(f.scope, scope, view)]
        beliefs = [b for b in store.beliefs if in_view(b.scope, scope, view)]
        layers = {
            "events": [e.wire() for e in ranked],
            "facts": [f.wire() for f in rank(facts, _claim_text, words, 0.0)[: limits["facts"]]]
            if "facts" in include
            else [],
            "beliefs": [b.wire() for b in rank(beliefs, _claim_text, words, 0.0)[: limits["beliefs"]]]
            if "beliefs" in include
            else [],
            "episodes": [],
            "understanding": [],
        }
        pack = Pack(store.new_id("pack"), scope, now, [e.id for e in ranked])
        _prune_packs(core, now)
        store.packs[pack.id] = pack
    if words:
        store.charge("embeddings", approx_tokens(body.get("query") or ""))
    out = {
        "pack_id": pack.id,
        "layers": layers,
        "warnings": [],
        "diagnostics": {},
        "provenance": {"trail": []},
    }
    if core.config.wire != "0.10":
        out["context_block"] = context_block(layers["events"])
    return out


def context_block(events: list[dict[str, Any]]) -> str:
    """The pack's events rendered as the 0.12 wire does: ``[YYYY-MM-DD HH:MM UTC] [role] text``
    each (no time for an event observed at none), separated by ``---`` lines."""
    blocks = []
    for event in events:
        at = str(event["context"].get("observed_at") or "")
        when = f"[{at[:10]} {at[11:16]} UTC] " if len(at) >= 16 else ""
        blocks.append(f"{when}[{event['content'].get('role') or 'user'}] {event['content'].get('text', '')}")
    return "\n---\n".join(blocks)


def _claim_text(record: Fact | Belief) -> str:
    return f"{record.subject} {record.predicate} {record.object}"


def _prune_packs(core: Core, now: float) -> None:
    packs = core.store.packs
    for pack_id in [p.id for p in packs.values() if now - p.created > core.config.pack_ttl]:
        del packs[pack_id]


def _live_pack(core: Core, pack_id: Any, now: float) -> Pack:
    pack = core.store.packs.get(pack_id) if isinstance(pack_id, str) else None
    if pack is None or core.faults.expire_packs or now - pack.created > core.config.pack_ttl:
        raise HttpError(404, "NOT_FOUND", f"pack {pack_id} is unknown or expired")
    return pack


def answer(core: Core, body: dict[str, Any]) -> dict[str, Any]:
    """``POST v1/answer``: an extractive answer from a live pack (or a fresh granular one)."""
    scope = require_scope(body.get("scope"))
    question = body.get("question")
    if not isinstance(question, str) or not question.strip():
        raise HttpError(422, "INVALID_BODY", "question is required")
    instructions = body.get("answer_instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise HttpError(422, "INVALID_BODY", "answer_instructions must be a string")
    store = core.store
    with store.lock:
        if body.get("use_pack_id") is None:
            pack = store.packs[recall(core, {"scope": scope, "query": question, "view": "granular"})["pack_id"]]
        else:
            pack = _live_pack(core, body["use_pack_id"], core.now())
        if pack.scope != scope:
            raise HttpError(400, "INVALID_BODY", f"pack {pack.id} was built for scope {pack.scope}")
        texts = [store.events[i].text for i in pack.event_ids if i in store.events]
    text = extractive_answer(texts)
    store.charge("answers", approx_tokens(question + " ".join(texts)) + approx_tokens(text))
    return {"answer": text, "citations": [], "diagnostics": {"answer_model": ANSWER_MODEL}}


def extractive_answer(texts: list[str]) -> str:
    """First sentences of ``texts`` joined with spaces, at most 600 characters; ``unknown`` if none."""
    firsts = [_FIRST_SENTENCE.split(t.strip(), maxsplit=1)[0] for t in texts if t.strip()]
    return " ".join(firsts)[:ANSWER_CHARS].rstrip() or "unknown"
