"""How a memeval item travels through mem0: the metadata it carries, the filters that select it,
and the item rebuilt from a memory mem0 returns. Pure functions, no mem0 import.

mem0 copies an ``add`` call's metadata into every memory it stores for it (one per message raw,
one per extracted fact with ``infer``), and returns it under ``metadata``. So each memory keeps
its source item's id, node and fields, and a recalled memory becomes that item with the
memory's text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from memeval.engines.base import MemoryItem, ToolCallRef
from memeval.errors import EngineError

ID, ITEM, NODE, SCOPES, SEQ = "memeval_id", "memeval_item", "memeval_node", "memeval_scopes", "memeval_seq"
_OWN = ("text", "id", "tool_calls", "tags")


def metadata(item: MemoryItem, seq: int) -> dict[str, Any]:
    """The mem0 metadata for ``item``: its id, node, node prefixes (every ``…:`` head of the node,
    for prefix filters), write number, and its other fields as one JSON string."""
    fields = {k: v for k, v in item.to_json().items() if k not in _OWN}
    fields["tool_calls"] = [[t.name, t.id] for t in item.tool_calls]
    fields["tags"] = list(item.tags)
    heads = [item.node[: i + 1] for i, ch in enumerate(item.node) if ch == ":"]
    return {ID: item.id, NODE: item.node, SCOPES: heads, SEQ: seq, ITEM: json.dumps(fields, ensure_ascii=False)}


def messages(item: MemoryItem) -> list[dict[str, str]]:
    """The one chat message ``add`` gets: assistant turns as ``assistant``, everything else as
    ``user`` (mem0 drops ``system`` messages and knows no other role; the real role stays in
    the metadata)."""
    return [{"role": "assistant" if item.role == "assistant" else "user", "content": item.text}]


def node_filter(tenant: str, nodes: tuple[str, ...]) -> dict[str, Any]:
    """mem0 filters for ``tenant`` (its ``user_id``) and the node patterns (exact names or
    prefixes ending in ``:``), applied inside qdrant."""
    exact = [n for n in nodes if not n.endswith(":")]
    heads = [n for n in nodes if n.endswith(":")]
    either = ([{NODE: {"in": exact}}] if exact else []) + ([{SCOPES: {"in": heads}}] if heads else [])
    if len(either) == 1:
        return {"user_id": tenant, **either[0]}
    return {"user_id": tenant, "OR": either}


def item_of(memory: Mapping[str, Any]) -> MemoryItem | None:
    """The item a memory mem0 returned stands for, with the memory's text; None for a memory
    memeval did not write (no ``memeval_id`` in its metadata).

    Raises:
        EngineError: a memeval memory without its text or with metadata memeval did not write
            (a malformed answer is mem0 misbehaving, not an empty item).
    """
    meta = memory.get("metadata") or {}
    if ID not in meta or ITEM not in meta:
        return None
    try:
        fields = json.loads(meta[ITEM])
        fields["tool_calls"] = tuple(ToolCallRef(name, call) for name, call in fields["tool_calls"])
        fields["tags"] = tuple(fields["tags"])
        text = memory["memory"]
        if not isinstance(text, str):
            raise TypeError(f"its text is {type(text).__name__}, not a string")
        return MemoryItem(**fields, text=text, id=meta[ID])
    except (KeyError, TypeError, ValueError) as err:
        raise EngineError(f"mem0 returned a memory memeval cannot read back ({type(err).__name__}: {err})") from err


def seq_of(memory: Mapping[str, Any]) -> int:
    """The write number stored with a memory (0 when absent)."""
    return int((memory.get("metadata") or {}).get(SEQ, 0))
