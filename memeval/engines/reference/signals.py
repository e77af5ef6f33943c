"""The ``words`` and ``grams`` text signals of many candidates at once in compiled code (numba),
for the reference engine's ranking (:class:`memeval.engines.reference.rank.Query`).

The signals are substring tests of a query's needles (its words, and the character trigrams of
its content words) on each candidate's flattened text. In Python each test is a call, 3-9 µs a
candidate for a ten-word question; here the candidates' texts are one UTF-8 buffer and the
needles sit in a small hash table by their first three bytes, so each text is read once, each of
its trigrams looked up, and only the needles starting with it compared byte by byte (needles
under three bytes are searched one by one). UTF-8 is self-synchronising, so a needle's bytes
occur in a text's bytes exactly when its characters occur in the text's characters. The results
are :meth:`Query.measure`'s to the last bit: the same counts and the same sums in the same order.

With the ``fast`` extra, a tenant of ``Tuning.compiled_docs``
documents or more measures its candidates here (numba is imported and the kernel compiled, or
read from numba's cache, on the first such batch); smaller ones stay in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from memeval.engines.reference import kernel as reference_kernel


class Needles(NamedTuple):
    """One query's probes as arrays: every needle's UTF-8 bytes in one buffer (the word needles
    first, then each trigram probe's grams), which word needles are stopwords and their weight,
    the share's denominator, and per trigram probe its word needle, its grams' range and how many
    of them may miss."""

    buf: Any
    starts: Any
    stop: Any
    stop_weight: float
    total: float
    probe_at: Any
    probe_lo: Any
    probe_hi: Any
    probe_spare: Any
    gram_words: int


def needles(words: Sequence[tuple[str, bool]], stop_weight: float, total: float,
            grams: Sequence[tuple[int, Sequence[str], int]], gram_words: int) -> Needles:
    """:class:`Needles` for a query's ``(needle, is a stopword)`` words and ``(word, grams,
    spare)`` trigram probes (see :class:`memeval.engines.reference.rank.Query`)."""
    buf, starts = _utf8([needle for needle, _ in words] + [gram for _, found, _ in grams for gram in found])
    lo, hi, at = [], [], len(words)
    for _, found, _ in grams:
        lo.append(at)
        at += len(found)
        hi.append(at)
    return Needles(buf, starts,
                   np.array([stop for _, stop in words], dtype=np.bool_), float(stop_weight), float(total),
                   np.array([word for word, _, _ in grams], dtype=np.int64), np.array(lo, dtype=np.int64),
                   np.array(hi, dtype=np.int64), np.array([spare for _, _, spare in grams], dtype=np.int64),
                   int(gram_words))


def measure(probes: Needles, flats: Sequence[str]) -> list[tuple[float, float]]:
    """The ``(words, grams)`` shares of each flattened text of ``flats``."""
    buf, starts = _utf8(flats)
    out = reference_kernel.loops().signals(buf, starts, probes.buf, probes.starts, probes.stop, probes.stop_weight,
                                           probes.total, probes.probe_at, probes.probe_lo, probes.probe_hi,
                                           probes.probe_spare, probes.gram_words)
    return list(zip(out[:, 0].tolist(), out[:, 1].tolist(), strict=True))


def _utf8(texts: Sequence[str]) -> tuple[Any, Any]:
    """``texts`` as one UTF-8 buffer (uint8) and the offsets of each text's bytes in it (one
    more than the texts: text ``i`` is ``buf[starts[i]:starts[i + 1]]``)."""
    encoded = [text.encode() for text in texts]
    starts = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=starts[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), starts
