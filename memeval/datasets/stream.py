"""Read a JSON array one element at a time, in bounded memory, hashing the bytes as they pass.

A published benchmark file can be several gigabytes (LongMemEval_m is about 2.7 GB); it is never
loaded whole. :class:`ArrayStream` reads fixed-size chunks, decodes them incrementally as UTF-8,
and hands each array element to :meth:`json.JSONDecoder.raw_decode` once the element is complete.
Memory is bounded by the largest single element (plus one chunk), never by the file.
"""

from __future__ import annotations

import codecs
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memeval.errors import UsageError

CHUNK_BYTES = 1 << 20
MAX_ELEMENT_BYTES = 1 << 30  # one instance larger than this is refused rather than buffered
_WS = " \t\n\r"


class ArrayStream:
    """Iterate the elements of the top-level JSON array in ``path``.

    After the iterator is exhausted, :attr:`sha256` holds the hex digest of every byte of the
    file and :attr:`count` the number of elements. Raises :class:`UsageError` (exit 2) with a
    one-line message naming the file when the file is not a JSON array, is truncated, holds
    malformed JSON, or has anything but whitespace after the closing bracket.
    """

    def __init__(self, path: str | Path, chunk_bytes: int = CHUNK_BYTES):
        self.path = Path(path)
        self.chunk_bytes = chunk_bytes
        self.sha256: str | None = None
        self.count = 0

    def __iter__(self) -> Iterator[Any]:
        try:
            handle = self.path.open("rb")
        except OSError as err:
            raise UsageError(f"{self.path}: cannot read the dataset file ({err.strerror})") from err
        with handle:
            yield from self._elements(_Chunks(handle, self.chunk_bytes, self.path))

    def _elements(self, chunks: _Chunks) -> Iterator[Any]:
        decoder = json.JSONDecoder()
        buf, pos = chunks.fill("", 0)
        pos = _skip_ws(buf, pos)
        if pos >= len(buf) or buf[pos] != "[":
            raise UsageError(f"{self.path}: not a JSON array (a benchmark file is a list of instances)")
        pos = _skip_ws(buf, pos + 1)
        buf, pos = chunks.ensure(buf, pos)
        if buf[pos:pos + 1] == "]":
            self._finish(chunks, buf, pos + 1)
            return
        while True:
            value, buf, pos = self._decode_one(decoder, chunks, buf, pos)
            self.count += 1
            yield value
            buf, pos = chunks.ensure(buf, _skip_ws(buf, pos))
            sep = buf[pos:pos + 1]
            if sep == "]":
                self._finish(chunks, buf, pos + 1)
                return
            if sep != ",":
                raise self._broken(chunks, f"expected ',' or ']' after element {self.count}", not sep)
            buf, pos = chunks.ensure(buf, _skip_ws(buf, pos + 1))

    def _decode_one(self, decoder: json.JSONDecoder, chunks: _Chunks, buf: str, pos: int) -> tuple[Any, str, int]:
        """Decode the element starting at ``pos``, reading more of the file until it is whole."""
        while True:
            try:
                value, end = decoder.raw_decode(buf, pos)
            except json.JSONDecodeError as err:
                cut = _may_continue(err, len(buf))
                if chunks.eof or not cut:
                    raise self._broken(chunks, f"element {self.count + 1}: {err.msg}", chunks.eof and cut) from None
                if len(buf) - pos > MAX_ELEMENT_BYTES:
                    raise UsageError(f"{self.path}: element {self.count + 1} is larger than "
                                     f"{MAX_ELEMENT_BYTES} characters; refusing to buffer it") from None
                buf, pos = chunks.more(buf, pos)
                continue
            # a number near the end of the buffer may continue in the next chunk ("0" of "0.5e3")
            if _is_number(value) and end > len(buf) - 8 and not chunks.eof:
                buf, pos = chunks.more(buf, pos)
                continue
            return value, buf, end

    def _finish(self, chunks: _Chunks, buf: str, pos: int) -> None:
        while True:
            if buf[_skip_ws(buf, pos):].strip(_WS):
                raise UsageError(f"{self.path}: unexpected data after the closing ']' of the array")
            if chunks.eof:
                break
            buf, pos = chunks.more(buf, len(buf))
        self.sha256 = chunks.digest.hexdigest()

    def _broken(self, chunks: _Chunks, what: str, truncated: bool) -> UsageError:
        state = "truncated" if truncated else "malformed JSON"
        return UsageError(f"{self.path}: {state}: {what} (after {chunks.read_bytes} bytes)")


class _Chunks:
    """The file's bytes as decoded text, appended to a buffer on demand and hashed as read."""

    def __init__(self, handle: Any, size: int, path: Path):
        self.handle, self.size, self.path = handle, size, path
        self.digest = hashlib.sha256()
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.eof = False
        self.read_bytes = 0
        self.step = size

    def more(self, buf: str, pos: int) -> tuple[str, int]:
        """Drop what lies before ``pos`` and append at least one more chunk (doubling the read
        while one element keeps growing, so a large element costs O(size), not O(size²))."""
        buf = buf[pos:]
        data = self.handle.read(self.step)
        self.step = min(self.step * 2, 1 << 26)
        if not data:
            self.eof = True
            return buf + self._decode(b"", final=True), 0
        self.read_bytes += len(data)
        self.digest.update(data)
        return buf + self._decode(data, final=False), 0

    def fill(self, buf: str, pos: int) -> tuple[str, int]:
        """The first chunk (skipping a UTF-8 byte-order mark)."""
        buf, pos = self.more(buf, pos)
        self.step = self.size
        return (buf[1:], 0) if buf.startswith("\ufeff") else (buf, pos)

    def ensure(self, buf: str, pos: int) -> tuple[str, int]:
        """Make sure at least one non-blank character follows ``pos`` unless the file ended."""
        while True:
            pos = _skip_ws(buf, pos)
            if pos < len(buf) or self.eof:
                self.step = self.size
                return buf, pos
            buf, pos = self.more(buf, pos)

    def _decode(self, data: bytes, final: bool) -> str:
        try:
            return self.decoder.decode(data, final)
        except UnicodeDecodeError as err:
            raise UsageError(f"{self.path}: not UTF-8 text near byte {self.read_bytes}: {err.reason}") from None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _may_continue(err: json.JSONDecodeError, length: int) -> bool:
    """Whether a decode error could be the buffer ending mid-element (more text may fix it),
    rather than broken JSON: an open string, or an error within a few characters of the end
    (a literal, number or escape cut in two). Broken JSON is reported at once, so a syntax
    error early in a large file never buffers the rest of it."""
    return err.msg.startswith("Unterminated string") or err.pos >= length - 6


def _skip_ws(buf: str, pos: int) -> int:
    n = len(buf)
    while pos < n and buf[pos] in _WS:
        pos += 1
    return pos
