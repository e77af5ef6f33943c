"""The static embedding model's vectors composed in numpy, a word at a time.

``tokenlearn-static-model`` ships a Unigram tokenizer (``tokenizer.json``) and, in
``model.safetensors``, a token-to-cluster ``mapping``, a weight per token and 10,000 int8
cluster vectors. A text's vector is the L2-normalised sum over its first 512 tokens of
``weight[t] * embeddings[mapping[t]]``. The tokenizer normalises the text (a precompiled NFKC
map, applied per grapheme), splits it on whitespace and tokenizes each word on its own (``▁`` +
word, the Viterbi path of highest summed piece score, a character no piece covers scored as the
unknown piece, consecutive pieces holding the unknown id fused into one token), so a word's share
of the sum is computed once and reused. The package's own encoder spends its time tokenizing the
same words again (about 12k texts/s here); this composition spends it on the words it has not
met yet.

A text whose characters are each a grapheme of their own (printable ASCII, and any other
character that is not a combining mark, a format or control character, a Hangul jamo, a regional
indicator or another grapheme extender) is normalised one character at a time and composed here;
``tests/engines/reference/test_static_vectors.py`` checks the result against the package's encoder. Every
other text goes to that encoder, which loads on the first such text (about a second).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from memeval.engines.reference.static_files import Unigram, safetensors

MAX_TOKENS = 512
_SPACE = "\u2581"
# HF's Unigram scores a character no piece covers at the lowest piece score minus this.
_UNK_PENALTY = 10.0
_PLAIN = re.compile(r"[\x20-\x7e\t\n\r]*")
_NOT_PLAIN = re.compile(r"[^\x20-\x7e\t\n\r]")
_SEPARATORS = re.compile("[\x1c-\x1f]")
_NEG = float("-inf")
# Words kept with their vectors; past this many the table starts again (a corpus of ids).
_WORDS_MAX = 400_000
# Categories of characters that can join a neighbour's grapheme, or that the normaliser may drop.
_JOINING = frozenset({"Mn", "Mc", "Me", "Cf", "Cc", "Cs", "Co", "Cn"})
# Grapheme extenders and prepends outside those categories, Hangul jamo, regional indicators.
_JOINING_RANGES = ((0x0D4E, 0x0D4E), (0x0E33, 0x0E33), (0x0EB3, 0x0EB3), (0x1100, 0x11FF),
                   (0xA960, 0xA97F), (0xD7B0, 0xD7FF), (0xFF9E, 0xFF9F), (0x111C2, 0x111C3),
                   (0x1193F, 0x1193F), (0x11941, 0x11941), (0x11A3A, 0x11A3A), (0x11A84, 0x11A89),
                   (0x11D46, 0x11D46), (0x1F1E6, 0x1F1FF), (0x1F3FB, 0x1F3FF))


class _Joining(Exception):
    """A character that may share a grapheme with its neighbours."""


class StaticVectors:
    """Vectors of the model in ``model_dir`` (the package's ``model`` folder).

    Raises:
        OSError: a model file is missing or unreadable.
        ValueError: a model file is not in the expected format.
    """

    def __init__(self, model_dir: Path, cache: Path | None, native: Callable[[list[str]], Any]) -> None:
        """``native(texts)`` is the package's encoder, for the texts not composed here;
        ``cache`` is the folder for the parsed vocabulary (None: parse every time)."""
        arrays = safetensors(model_dir / "model.safetensors")
        self._weights, self._mapping = arrays["weights"], arrays["mapping"]
        self._vectors = arrays["embeddings"].astype(np.float32)
        self.dim = int(self._vectors.shape[1])
        self._model = Unigram(model_dir / "tokenizer.json", cache)
        self._unk_score = float(self._model.scores.min()) - _UNK_PENALTY
        self._native = native
        self._row: dict[str, int] = {}
        self._table = np.zeros((1024, self.dim), dtype=np.float32)  # row 0 stays zero
        self._count: list[int] = [0]
        self._replaced: dict[str, str | None] = {}  # None: the character may join a grapheme

    def embed(self, texts: Sequence[str]) -> Any:
        """One L2-normalised float32 row per text (the zero row for a text without tokens)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        composed, rows, other = [], [], []
        for i, text in enumerate(texts):
            normal = text if _PLAIN.fullmatch(text) else self._normal(text)
            if normal is None:
                other.append(i)
                continue
            words = self._rows_of(normal.split())
            if sum(map(self._count.__getitem__, words)) > MAX_TOKENS:
                out[i] = self._long(normal)
            elif words:
                composed.append(i)
                rows.append(words)
        if composed:
            out[composed] = self._compose(rows)
        if other:
            out[other] = np.asarray(self._native([texts[i] for i in other]), dtype=np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)

    def tokens(self, word: str) -> list[int]:
        """The token ids of one normalised word without whitespace (see the module docstring)."""
        text = _SPACE + word
        find = self._model.ids.get if word.isascii() else self._model.find
        scores, size = self._model.scores, len(text)
        best = [0.0] + [_NEG] * size
        back = [(0, 0)] * (size + 1)
        for start in range(size):
            base, single = best[start], False
            for end in range(start + 1, min(size, start + self._model.longest) + 1):
                tid = find(text[start:end])
                if tid is not None:
                    single = single or end == start + 1
                    if base + scores[tid] > best[end]:
                        best[end], back[end] = base + scores[tid], (start, tid)
            if not single and base + self._unk_score > best[start + 1]:
                best[start + 1], back[start + 1] = base + self._unk_score, (start, self._model.unk)
        return self._fused(text, back, find)

    def _fused(self, text: str, back: list[tuple[int, int]], find: Callable[[str], int | None]) -> list[int]:
        """The best path's ids, read back from its end, each run of unknown-id pieces fused into
        one token (looked up like any piece, else the unknown id)."""
        unk = self._model.unk
        out: list[int] = []
        end, run = len(text), 0
        while end > 0:
            start, tid = back[end]
            if tid == unk:
                run = run or end
            else:
                if run:
                    out.append(_or(find(text[end:run]), unk))
                    run = 0
                out.append(tid)
            end = start
        if run:
            out.append(_or(find(text[:run]), unk))
        return out[::-1]

    def _normal(self, text: str) -> str | None:
        """``text`` as the normaliser writes it, when each of its characters is a grapheme of
        its own (None otherwise: the package's encoder takes it)."""
        try:
            normal = _NOT_PLAIN.sub(self._replace, text)
        except _Joining:
            return None
        # Python splits on four separators (U+001C-U+001F) that the tokenizer keeps in words.
        return None if _SEPARATORS.search(normal) else normal

    def _replace(self, match: re.Match[str]) -> str:
        """A non-plain character's replacement (decided once per character: a text in another
        script repeats a few thousand of them)."""
        char = match.group()
        if char not in self._replaced:
            code = ord(char)
            joins = unicodedata.category(char) in _JOINING or any(lo <= code <= hi for lo, hi in _JOINING_RANGES)
            self._replaced[char] = None if joins else self._model.charmap.get(char)
        found = self._replaced[char]
        if found is None:
            raise _Joining(char)
        return found

    def _compose(self, rows: list[list[int]]) -> Any:
        """The sum of each list's word vectors: one gather and add per word position over all
        lists at once (``np.add.reduceat`` over rows of 64 is several times slower)."""
        if len(rows) == 1:  # a query: no grid to build
            return self._table[rows[0]].sum(axis=0, keepdims=True)
        lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
        width = int(lengths.max())
        grid = np.zeros((width, len(rows)), dtype=np.int64)  # row 0 of the table is zeros
        grid.T[np.arange(width) < lengths[:, None]] = np.fromiter(chain.from_iterable(rows), dtype=np.int64)
        total = self._table[grid[0]]
        for position in grid[1:]:
            total += self._table[position]
        return total

    def _rows_of(self, words: list[str]) -> list[int]:
        """Each word's row in the table of word vectors, adding the words not met yet."""
        row = self._row
        try:
            return list(map(row.__getitem__, words))
        except KeyError:
            pass
        if len(row) > _WORDS_MAX:
            row.clear()
            del self._count[1:]
        for word in words:
            if word not in row:
                ids = self.tokens(word)
                at = len(self._count)
                if at >= len(self._table):
                    self._table = np.concatenate([self._table, np.zeros_like(self._table)])
                self._table[at] = self._sum(ids)
                self._count.append(len(ids))
                row[word] = at
        return list(map(row.__getitem__, words))

    def _long(self, normal: str) -> Any:
        """The unnormalised vector of a text of more than :data:`MAX_TOKENS` tokens."""
        return self._sum([tid for word in normal.split() for tid in self.tokens(word)][:MAX_TOKENS])

    def _sum(self, ids: list[int]) -> Any:
        """The unnormalised sum of the tokens ``ids``."""
        return (self._weights[ids, None] * self._vectors[self._mapping[ids]]).sum(axis=0)


def _or(tid: int | None, unk: int) -> int:
    return unk if tid is None else tid
