"""Reading the static embedding model's files for :mod:`memeval.engines.reference.static_vectors`.

- ``model.safetensors``: named little-endian arrays after a JSON header (:func:`safetensors`);
- ``tokenizer.json``: a Unigram model (pieces and scores, the unknown id) and a ``Precompiled``
  normalizer (:class:`Charmap`: a double-array trie from UTF-8 keys to replacement strings,
  SentencePiece's format).

Parsing 276k pieces out of ``tokenizer.json`` is most of a process's start-up cost, so the parse
is kept in the user's cache folder (:func:`cache_folder`), keyed by the file's SHA-256; a cache
file that does not read back whole is ignored and rewritten. The pieces a plain (printable ASCII)
word can be cut into are read into a dict at once; the rest are looked up in their sorted blob.
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import json
import os
import re
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from memeval.util.userdirs import cache_root

# The pieces a plain word can be cut into: printable ASCII, the first perhaps after "▁".
_PLAIN_PIECE = re.compile("\u2581?[\x21-\x7e]*")
_FORMAT = b"memeval-unigram-2"


def cache_folder(env: Mapping[str, str]) -> Path:
    """``$XDG_CACHE_HOME/memeval/models``, else ``~/.cache/memeval/models``."""
    return Path(cache_root(env)) / "models"


def safetensors(path: Path) -> dict[str, Any]:
    """The arrays of a safetensors file by name (read-only views of one read).

    Raises:
        OSError: the file cannot be read.
        ValueError: it is not a safetensors file of the dtypes used here.
    """
    raw = path.read_bytes()
    (size,) = struct.unpack("<Q", raw[:8])
    kinds: dict[str, np.dtype[Any]] = {"I64": np.dtype("<i8"), "F32": np.dtype("<f4"), "I8": np.dtype("i1")}
    arrays = {}
    for name, spec in json.loads(raw[8 : 8 + size]).items():
        if name == "__metadata__":
            continue
        if spec["dtype"] not in kinds:
            raise ValueError(f"{path}: tensor {name} has dtype {spec['dtype']}")
        kind, (lo, hi) = kinds[spec["dtype"]], spec["data_offsets"]
        array = np.frombuffer(raw, dtype=kind, count=(hi - lo) // kind.itemsize, offset=8 + size + lo)
        arrays[name] = array.reshape(spec["shape"])
    return arrays


class Charmap:
    """SentencePiece's precompiled character map: :meth:`get` of one character gives what the
    normalizer writes for it (the character itself when the map has no entry)."""

    def __init__(self, blob: bytes) -> None:
        """``blob`` is the decoded ``precompiled_charsmap``: a u32 trie size in bytes, the trie's
        u32 units, then the NUL-terminated replacement strings."""
        (size,) = struct.unpack("<I", blob[:4])
        self._units = np.frombuffer(blob, dtype="<u4", count=size // 4, offset=4).tolist()
        self._strings = blob[4 + size :]

    def get(self, char: str) -> str:
        """The replacement of ``char``: the entry of its shortest key prefix, as SentencePiece's
        ``transform`` takes it (a trie walk; callers keep what they need)."""
        at = self._first_match(char.encode())
        return char if at is None else self._strings[at : self._strings.index(0, at)].decode()

    def _first_match(self, key: bytes) -> int | None:
        """The value of the shortest prefix of ``key`` in the double-array trie (Darts' layout:
        a unit's label in bits 0-7 and 31, a leaf flag in bit 8, an offset above)."""
        units = self._units
        pos = _offset(units[0])
        for byte in key:
            pos ^= byte
            if pos >= len(units):
                return None
            unit = units[pos]
            if unit & 0x800000FF != byte:
                return None
            pos ^= _offset(unit)
            if (unit >> 8) & 1:
                return int(units[pos] & 0x7FFFFFFF)
        return None


class Unigram:
    """The tokenizer's model: piece ids (plain pieces in a dict, any piece through :meth:`find`),
    every piece's score, the unknown id, the longest piece's length and the normalizer's
    :class:`Charmap`.

    Raises:
        OSError: ``tokenizer.json`` cannot be read.
        ValueError: it is not a Unigram model without byte fallback behind a precompiled map.
    """

    def __init__(self, path: Path, cache: Path | None) -> None:
        raw = path.read_bytes()
        stored = cache / f"unigram-{hashlib.sha256(raw).hexdigest()[:24]}.bin" if cache else None
        parts = _read_cache(stored) if stored is not None else None
        if parts is None:
            parts = _parse(path, raw)
            if stored is not None:
                _write_cache(stored, parts)
        head, self.scores, order, self._plain, self._rest, charmap = parts
        self.unk, self._kept, self.longest = struct.unpack("<QQQ", head)
        self._order = order
        self.ids: dict[str, int] = dict(zip(self._plain.decode().split("\0"), order[: self._kept].tolist(), strict=True))
        self.charmap = Charmap(charmap)
        self._bounds: list[int] | None = None

    def find(self, piece: str) -> int | None:
        """``piece``'s id, None when it is not a piece. The other pieces stay in one blob sorted
        by their UTF-8 bytes, searched by bisection (a dict of all 171k of them would cost a
        tenth of a second to build, for the few words of a run that are not plain ASCII)."""
        tid = self.ids.get(piece)
        if tid is not None or not self._rest or _PLAIN_PIECE.fullmatch(piece):
            return tid
        if self._bounds is None:  # where each piece starts, and one past the last
            ends = np.flatnonzero(np.frombuffer(self._rest, dtype=np.uint8) == 0)
            self._bounds = [0, *(ends + 1).tolist(), len(self._rest) + 1]
        key, bounds, rest = piece.encode(), self._bounds, self._rest
        at = bisect.bisect_left(range(len(bounds) - 1), key, key=lambda i: rest[bounds[i] : bounds[i + 1] - 1])
        if at < len(bounds) - 1 and rest[bounds[at] : bounds[at + 1] - 1] == key:
            return int(self._order[self._kept + at])
        return None


def _offset(unit: int) -> int:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


def _parse(path: Path, raw: bytes) -> list[Any]:
    """The cache's parts from ``tokenizer.json`` itself (see :func:`_write_cache`)."""
    spec = json.loads(raw)
    model, normalizer = spec["model"], spec.get("normalizer") or {}
    if model.get("type") != "Unigram" or model.get("byte_fallback") or normalizer.get("type") != "Precompiled":
        raise ValueError(f"{path}: not a Unigram tokenizer without byte fallback behind a precompiled map")
    pieces = [piece for piece, _ in model["vocab"]]
    if any("\0" in piece for piece in pieces):
        raise ValueError(f"{path}: a piece holds a NUL character")
    plain = [tid for tid, piece in enumerate(pieces) if _PLAIN_PIECE.fullmatch(piece)]
    rest = sorted(set(range(len(pieces))).difference(plain), key=lambda tid: pieces[tid].encode())
    return [struct.pack("<QQQ", int(model["unk_id"]), len(plain), max(map(len, pieces))),
            np.array([score for _, score in model["vocab"]], dtype="<f8"),
            np.array(plain + rest, dtype="<i4"),
            "\0".join(pieces[tid] for tid in plain).encode(), "\0".join(pieces[tid] for tid in rest).encode(),
            base64.b64decode(normalizer["precompiled_charsmap"])]


def _read_cache(path: Path) -> list[Any] | None:
    """The parts :func:`_write_cache` wrote, or None when the file is missing or not whole."""
    try:
        raw = path.read_bytes()
        if not raw.startswith(_FORMAT):
            return None
        count = struct.unpack_from("<Q", raw, len(_FORMAT))[0]
        sizes = struct.unpack_from(f"<{count}Q", raw, len(_FORMAT) + 8)
    except (OSError, struct.error):
        return None
    start = len(_FORMAT) + 8 + 8 * count
    if count != 6 or start + sum(sizes) != len(raw):
        return None
    blobs = []
    for size in sizes:
        blobs.append(raw[start : start + size])
        start += size
    return [blobs[0], np.frombuffer(blobs[1], dtype="<f8"), np.frombuffer(blobs[2], dtype="<i4"), *blobs[3:]]


def _write_cache(path: Path, parts: list[Any]) -> None:
    """Write the parts (bytes or arrays) atomically; a folder that cannot be written only means
    no cache."""
    blobs = [part.tobytes() if isinstance(part, np.ndarray) else part for part in parts]
    head = _FORMAT + struct.pack(f"<Q{len(blobs)}Q", len(blobs), *map(len, blobs))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(head + b"".join(blobs))
        partial.replace(path)
    except OSError:
        pass
