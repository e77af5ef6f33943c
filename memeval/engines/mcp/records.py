"""How a memeval item travels through an MCP memory server's tools, and how answers read back.

A write sends the item's text, and, when the write tool takes a metadata object, every other
field of the item under ``memeval`` (:func:`item_metadata`), so a server that keeps metadata
hands back the whole :class:`MemoryItem` (:func:`item_of`). memeval's own server
(``memeval serve mcp``) keeps it; a server that does not is read by text instead (the engine's
log of what it wrote, see :mod:`memeval.engines.mcp.engine`).

A JSON answer is the tool result's structured content or, failing that, the JSON text of its
first text block. :func:`records_of` finds the list of memories in it (the answer itself, or
the first list under ``results``, ``memories``, ``items``, ``hits`` or ``data``); each memory
is an object with its text under ``text``, ``content``, ``memory`` or ``body``. Anything else
is malformed: :class:`Malformed`, which the engine turns into an EngineError (never a miss).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from memeval.engines.base import MemoryItem, ToolCallRef

ENVELOPE = "memeval"
LIST_KEYS = ("results", "memories", "items", "hits", "data")
TEXT_KEYS = ("text", "content", "memory", "body")
ID_KEYS = ("id", "memory_id", "event_id", "episode_id")
SCORE_KEYS = ("score", "similarity", "relevance")
CURSOR_KEYS = ("next_cursor", "cursor", "next")
COUNT_KEYS = ("removed", "deleted", "forgotten", "count")
_FIELDS = ("node", "kind", "role", "title", "thread", "turn", "agent", "at", "tags", "tool_calls")
_INT = re.compile(r"\b(\d+)\b")


class Malformed(Exception):
    """A tool answer that does not have the shape its call needs; the message says how."""


@dataclass(frozen=True)
class Record:
    """One memory a tool answered with: its text, the server's id and score when given, and
    the memeval envelope when the server kept it."""

    text: str
    id: str | None = None
    score: float | None = None
    envelope: dict[str, Any] | None = field(default=None, compare=False)


def item_metadata(item: MemoryItem) -> dict[str, Any]:
    """The metadata object a write sends: ``{"memeval": {...every field but tenant and text}}``."""
    body = item.to_json()
    return {ENVELOPE: {k: body[k] for k in ("id", *_FIELDS)}}


def item_of(tenant: str, record: Record) -> MemoryItem | None:
    """The item a record carries in its envelope (None without one).

    Raises:
        Malformed: the envelope lacks a field or holds a value of the wrong type.
    """
    env = record.envelope
    if env is None:
        return None
    try:
        calls = tuple(ToolCallRef(str(c["name"]), str(c["id"])) for c in env.get("tool_calls") or ())
        item = MemoryItem(tenant, _str(env["node"]), _str(env["kind"]), record.text, _str(env["role"]),
                          _opt(env.get("title")), _opt(env.get("thread")), _opt_int(env.get("turn")),
                          _opt(env.get("agent")), _opt(env.get("at")), calls,
                          tuple(_str(t) for t in env.get("tags") or ()), _str(env["id"]))
    except (KeyError, TypeError, ValueError) as err:
        raise Malformed(f"a memory's memeval envelope is broken ({type(err).__name__}: {err})") from None
    return item


def answer_json(structured: Any, texts: list[str]) -> Any:
    """The JSON value of a tool answer: its structured content, else its first text block parsed.

    Raises:
        Malformed: no structured content and no text block that is JSON.
    """
    if structured is not None:
        return structured
    if not texts:
        raise Malformed("the answer holds neither structured content nor text")
    try:
        return json.loads(texts[0])
    except ValueError:
        raise Malformed(f"the answer is not JSON: {texts[0][:80]!r}") from None


def records_of(value: Any) -> list[Record]:
    """The memories in a JSON answer (see the module docstring). Raises Malformed."""
    found = value
    if isinstance(value, dict):
        found = next((value[k] for k in LIST_KEYS if isinstance(value.get(k), list)), None)
    if not isinstance(found, list):
        raise Malformed(f"no list of memories in the answer (looked for {', '.join(LIST_KEYS)})")
    return [_record(entry) for entry in found]


def cursor_of(value: Any) -> str | None:
    """The next-page cursor of a JSON listing answer (None: last page). Raises Malformed."""
    if not isinstance(value, dict):
        return None
    cursor = next((value[k] for k in CURSOR_KEYS if k in value), None)
    if cursor is None or isinstance(cursor, str | int) and not isinstance(cursor, bool):
        return None if cursor is None or cursor == "" else str(cursor)
    raise Malformed(f"the listing's cursor is a {type(cursor).__name__}")


def id_of(value: Any, texts: list[str]) -> str | None:
    """The server's id for a stored memory: ``id`` (or a like key) of a JSON answer, else the
    word after ``ID:`` in a text answer; None when the answer names none."""
    if isinstance(value, dict):
        found = next((value[k] for k in ID_KEYS if isinstance(value.get(k), str | int)), None)
        return None if found is None else str(found)
    match = re.search(r"(?i)\bid:?\s+([A-Za-z0-9_.:-]+)", " ".join(texts))
    return match.group(1) if match else None


def count_of(value: Any, texts: list[str]) -> int:
    """How many memories a forget removed: a count key of a JSON answer, else the first number of
    a text answer. Raises Malformed when the answer says neither."""
    if isinstance(value, dict):
        for key in COUNT_KEYS:
            got = value.get(key)
            if isinstance(got, dict):
                got = got.get("events", got.get("memories"))
            if isinstance(got, int) and not isinstance(got, bool) and got >= 0:
                return got
        raise Malformed(f"the forget answer holds no count (looked for {', '.join(COUNT_KEYS)})")
    match = _INT.search(" ".join(texts))
    if match is None:
        raise Malformed(f"the forget answer names no count: {' '.join(texts)[:80]!r}")
    return int(match.group(1))


def _record(entry: Any) -> Record:
    if not isinstance(entry, dict):
        raise Malformed(f"a memory is a {type(entry).__name__}, not an object")
    text = next((entry[k] for k in TEXT_KEYS if isinstance(entry.get(k), str)), None)
    if text is None:
        raise Malformed(f"a memory has no text (looked for {', '.join(TEXT_KEYS)})")
    found_id = next((entry[k] for k in ID_KEYS if isinstance(entry.get(k), str | int)), None)
    score = next((entry[k] for k in SCORE_KEYS if k in entry), None)
    if score is not None and (isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score)):
        raise Malformed(f"a memory's score is {score!r}, not a finite number")
    metadata = entry.get("metadata")
    envelope = metadata.get(ENVELOPE) if isinstance(metadata, dict) else None
    if envelope is not None and not isinstance(envelope, dict):
        raise Malformed("a memory's memeval envelope is not an object")
    return Record(text, None if found_id is None else str(found_id), None if score is None else float(score), envelope)


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not a string")
    return value


def _opt(value: Any) -> str | None:
    return None if value is None else _str(value)


def _opt_int(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{value!r} is not an integer")
    return value
