"""A reference-engine tenant's items on disk, as columns, read back lazily.

Each text field is one UTF-8 blob with int64 offsets (``<field>.bin`` / ``<field>.idx``), so a
tenant of a million items opens without parsing anything: an item becomes a
:class:`~memeval.engines.base.MemoryItem` when it is first read. Optional fields keep a
``<field>.none`` mask; ``turn`` is an int64 column; tool calls and tags, rare, are JSON text.
"""

from __future__ import annotations

import json
import mmap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memeval.engines.base import MemoryItem, ToolCallRef

_TEXT = ("node", "kind", "text", "role", "id")
_OPTIONAL = ("title", "thread", "agent", "at", "extra")


def save(items: Sequence[MemoryItem | None], folder: Path) -> None:
    """Write ``items`` (None: a removed item) as columns under ``folder``."""
    rows = [item or _REMOVED for item in items]
    for field in _TEXT[:-1]:
        _save_strings(folder, field, [getattr(item, field) for item in rows])
    # The last text field, the id. A removed row's id is empty, which no item's id can be (an empty id becomes a fingerprint).
    _save_strings(folder, "id", ["" if item is None else item.id for item in items])
    extras = [_extra(item) for item in rows]
    for field, values in zip(_OPTIONAL, ([i.title for i in rows], [i.thread for i in rows],
                                         [i.agent for i in rows], [i.at for i in rows], extras), strict=True):
        np.save(folder / f"{field}.none.npy", np.array([v is None for v in values], dtype=bool))
        _save_strings(folder, field, [v or "" for v in values])
    turns = [-1 if item.turn is None else item.turn for item in rows]
    np.save(folder / "turn.npy", np.array(turns, dtype=np.int64))
    np.save(folder / "turn.none.npy", np.array([item.turn is None for item in rows], dtype=bool))
    np.save(folder / "removed.npy", np.array([item is None for item in items], dtype=bool))


class StoredItems:
    """A tenant's items by document number: those loaded from disk (built on first access, a
    removed one is None), then those written since. Supports ``len``, indexing, assigning
    None (a removal) and ``append``, which is all :class:`TenantStore` needs of a list."""

    def __init__(self, tenant: str, folder: Path | None = None) -> None:
        self._tenant = tenant
        self._columns = {f: _load_strings(folder, f) for f in _TEXT + _OPTIONAL} if folder else {}
        self._none = {f: np.load(folder / f"{f}.none.npy") for f in (*_OPTIONAL, "turn")} if folder else {}
        self._turn = np.load(folder / "turn.npy") if folder else np.zeros(0, dtype=np.int64)
        self.removed = np.load(folder / "removed.npy") if folder else np.zeros(0, dtype=bool)
        self._stored = len(self._turn)
        self._made: dict[int, MemoryItem | None] = {}
        self._new: list[MemoryItem | None] = []

    def __len__(self) -> int:
        return self._stored + len(self._new)

    def __getitem__(self, doc: int) -> MemoryItem | None:
        if doc >= self._stored:
            return self._new[doc - self._stored]
        if doc in self._made:
            return self._made[doc]
        item = None if self.removed[doc] else self._build(doc)
        self._made[doc] = item
        return item

    def __setitem__(self, doc: int, value: None) -> None:
        if doc >= self._stored:
            self._new[doc - self._stored] = value
        else:
            self._made[doc] = value

    def text(self, doc: int) -> str:
        """Document ``doc``'s title and text as its engine indexes them (:func:`indexed_text`;
        "" when removed), read from the columns without building the item (a recall reads the
        texts of a hundred candidates and returns a few items)."""
        if doc >= self._stored or doc in self._made:
            item = self[doc]
            return "" if item is None else indexed_text(item.title, item.text)
        if self.removed[doc]:
            return ""
        title = None if self._none["title"][doc] else _decode(*self._columns["title"], doc)
        return indexed_text(title, _decode(*self._columns["text"], doc))

    def append(self, item: MemoryItem) -> None:
        """Add the next document's item."""
        self._new.append(item)

    def column(self, field: str) -> list[str]:
        """Every stored item's ``field`` (a text field, or an optional one with "" where unset),
        decoded at once."""
        return _decode_all(*self._columns[field])

    def optional_column(self, field: str) -> list[str | None]:
        """Every stored item's optional ``field`` (``thread``, say), decoded at once; None where
        it is unset or the item removed."""
        none = self._none[field] | self.removed
        return [None if gone else value for value, gone in zip(self.column(field), none.tolist(), strict=True)]

    def _build(self, doc: int) -> MemoryItem:
        text = {f: _decode(*self._columns[f], doc) for f in _TEXT}
        optional = {f: None if self._none[f][doc] else _decode(*self._columns[f], doc) for f in _OPTIONAL}
        extra = json.loads(optional.pop("extra") or "{}")
        calls = tuple(ToolCallRef(**call) for call in extra.get("tool_calls", ()))
        turn = None if self._none["turn"][doc] else int(self._turn[doc])
        return MemoryItem(self._tenant, text["node"], text["kind"], text["text"], text["role"], optional["title"],
                          optional["thread"], turn, optional["agent"], optional["at"], calls,
                          tuple(extra.get("tags", ())), text["id"])


_REMOVED = MemoryItem("", "", "", "", id="-")


def indexed_text(title: str | None, text: str) -> str:
    """What the reference engine indexes of an item: its text, after its title when it has one."""
    return text if title is None else f"{title}\n{text}"


def _extra(item: MemoryItem) -> str | None:
    """The rare fields as JSON, or None when the item has neither tool calls nor tags."""
    if not item.tool_calls and not item.tags:
        return None
    calls = [{"name": c.name, "id": c.id} for c in item.tool_calls]
    return json.dumps({"tool_calls": calls, "tags": list(item.tags)})


def _save_strings(folder: Path, field: str, values: list[str]) -> None:
    encoded = [value.encode() for value in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    (folder / f"{field}.bin").write_bytes(b"".join(encoded))
    np.save(folder / f"{field}.idx.npy", offsets)


def _load_strings(folder: Path, field: str) -> tuple[Any, Any]:
    """The strings' blob, memory-mapped (a slice of an ``mmap`` is bytes at once, where a numpy
    memmap's costs microseconds of subclass bookkeeping), and their offsets."""
    blob: Any = b""
    if (folder / f"{field}.bin").stat().st_size:
        with open(folder / f"{field}.bin", "rb") as file:
            blob = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    return blob, np.load(folder / f"{field}.idx.npy")


def _decode(blob: Any, offsets: Any, doc: int) -> str:
    raw: bytes = blob[offsets[doc] : offsets[doc + 1]]
    return raw.decode()


def _decode_all(blob: Any, offsets: Any) -> list[str]:
    raw = bytes(blob)
    ends = offsets.tolist()
    return [raw[a:b].decode() for a, b in zip(ends, ends[1:], strict=False)]
