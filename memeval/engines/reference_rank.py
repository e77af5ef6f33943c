"""Fused ranking for the reference engine: every signal votes on one pool of candidates.

The pool is the union of the BM25 top list, the dense top list and a few filler candidates
(the engine passes the newest items). Each candidate is scored on
four signals, each normalised to [0, 1] by the best value in the pool:

- ``bm25``: the Okapi BM25 score over content words (0 outside the BM25 list);
- ``words``: the weighted share of the query's distinct words the candidate holds (a content
  word by its stem at a word start, so ``deploy`` meets ``deployed``; a stopword as a whole
  word at a fifth of the weight, so "what did we switch off" still counts "off");
- ``grams``: per content word of the query, the share of its character trigrams (padded with
  spaces) found in the candidate, counted from two thirds of them on and averaged over the words,
  which meets near-miss spellings and inflections;
- ``dense``: cosine similarity, shifted so the worst dense candidate is 0 (all equal: all 1).

The fused score is their weighted sum, plus, with a recency key per document, a bounded bonus
in proportion to a candidate's recency rank among the contenders (candidates within half the
best score; at most :data:`RECENCY`), so that among candidates matching about equally the newer
one comes first. Then a candidate that a newer near-duplicate supersedes goes after the rest
(:func:`demote_superseded`). The text signals are substring tests on the flattened text, a few
microseconds a candidate, so nothing per document is precomputed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import compress

from memeval.engines.reference_index import STOPWORDS, flatten, stem
from memeval.engines.supersede import Shape, asked_words, replaces, shape

W_BM25 = 1.0
W_WORDS = 0.6
W_GRAMS = 1.0
W_DENSE = 1.0
RECENCY = 0.25
STOPWORD_WEIGHT = 0.2
CONTENDER_SHARE = 0.5
# Demoting can push an item out of its section, so it takes near-duplicates (the pack's own
# move to a final section keeps the item and asks for less).
SUPERSEDE_SHARE = 0.7
_GRAM = 3
FUZZY = 0.67


class Texts:
    """A tenant's document texts, flattened on demand."""

    def __init__(self, text_of: Callable[[int], str]) -> None:
        self._text_of = text_of

    def flat(self, doc: int) -> str:
        """``doc``'s text lower-cased, punctuation as spaces, padded with a space each side."""
        return f" {flatten(self._text_of(doc))} "

    def shape(self, doc: int) -> Shape:
        """``doc``'s :func:`memeval.engines.supersede.shape` (cached there)."""
        return shape(self._text_of(doc))


class Query:
    """A query's probes for the text signals: ``(needle, weight)`` words and trigrams."""

    def __init__(self, text: str) -> None:
        words = dict.fromkeys(flatten(text).split())
        self.words = [(f" {w} ", STOPWORD_WEIGHT) if w in STOPWORDS else (f" {stem(w)}", 1.0) for w in words]
        self._needles = [needle for needle, _ in self.words]
        self._weights = [weight for _, weight in self.words]
        self.total = sum(self._weights) or 1.0
        content = [w for w in words if w not in STOPWORDS and len(w) > 2]
        self.grams = [(f" {stem(w)}", _grams(w)) for w in content]

    def word_share(self, flat: str) -> float:
        """The weighted share of the query's words found in ``flat``."""
        return sum(compress(self._weights, map(flat.__contains__, self._needles))) / self.total

    def gram_share(self, flat: str) -> float:
        """The mean over the query's content words of the share of their trigrams found in
        ``flat``, a word counting only from :data:`FUZZY` (so stray trigrams are not a match)."""
        total = 0.0
        for needle, grams in self.grams:
            if needle in flat:  # the word's stem is there: all that matters of its trigrams
                total += 1.0
                continue
            share = sum(map(flat.__contains__, grams)) / len(grams)
            if share >= FUZZY:
                total += share
        return total / (len(self.grams) or 1)


def rank(
    query: str,
    lexical: Sequence[tuple[int, float]],
    dense: Sequence[tuple[int, float]] | None,
    texts: Texts,
    keys: Sequence[int] | None,
    dated: Callable[[int], bool] = bool,
    span: int = 0,
    recent: Sequence[int] = (),
) -> list[tuple[int, float]]:
    """The pool of ``lexical``, ``dense`` and ``recent`` candidates, best first, as
    ``(doc, fused score)``; ``recent`` (say, the newest items) only fills the pool.

    Ties are broken newest first with ``keys`` (recency key per document), else oldest first.
    With ``keys``, superseded candidates among the first ``span`` go after the rest
    (:func:`demote_superseded`; ``dated`` tells whether a key belongs to a dated item).
    """
    bm25 = dict(lexical)
    near = dict(dense or ())
    pool = list(dict.fromkeys([*bm25, *near, *recent]))
    if not pool:
        return []
    asked = Query(query)
    flats = {doc: texts.flat(doc) for doc in pool}
    scores = dict.fromkeys(pool, 0.0)
    _add(scores, bm25, W_BM25)
    _add(scores, {d: asked.word_share(f) for d, f in flats.items()}, W_WORDS)
    _add(scores, {d: asked.gram_share(f) for d, f in flats.items()}, W_GRAMS)
    if near:
        # Shifted by the worst so the spread decides; equal cosines (one candidate) count fully.
        low = min(near.values())
        spread = max(near.values()) > low
        _add(scores, {d: s - low if spread else 1.0 for d, s in near.items()}, W_DENSE)
    if keys is None:
        return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
    # Recency ranks only the contenders: unrelated newer items must not push a superseding
    # value's recency rank down.
    best = max(scores.values())
    order = sorted((d for d in pool if scores[d] >= CONTENDER_SHARE * best), key=keys.__getitem__)
    steps = max(len(order) - 1, 1)
    for i, doc in enumerate(order):
        scores[doc] += RECENCY * i / steps
    ranked = sorted(scores.items(), key=lambda pair: (-pair[1], -keys[pair[0]]))
    return demote_superseded(ranked, query, texts, keys, dated, span)


def demote_superseded(
    ranked: list[tuple[int, float]], query: str, texts: Texts, keys: Sequence[int],
    dated: Callable[[int], bool], span: int,
) -> list[tuple[int, float]]:
    """``ranked`` with each superseded candidate among the first ``span`` moved after them, in
    rank order (see :func:`memeval.engines.supersede.replaces`, both items dated, at least
    :data:`SUPERSEDE_SHARE` of their words in common).

    Scores are kept, so a demoted item shows its own (higher) score below a lower one.
    """
    head = [doc for doc, _ in ranked[:span] if dated(keys[doc])]
    asked = asked_words(query)
    stale = {old for old in head for new in head
             if keys[new] > keys[old] and replaces(texts.shape(new), texts.shape(old), asked, SUPERSEDE_SHARE)}
    if not stale:
        return ranked
    return [p for p in ranked if p[0] not in stale] + [p for p in ranked if p[0] in stale]


def _add(scores: dict[int, float], signal: dict[int, float], weight: float) -> None:
    """Add ``signal`` normalised by its best value (a signal that is all zero adds nothing)."""
    best = max(signal.values(), default=0.0)
    if best > 0:
        for doc, value in signal.items():
            scores[doc] += weight * value / best


def _grams(word: str) -> list[str]:
    padded = f" {word} "
    return [padded[i : i + _GRAM] for i in range(len(padded) - _GRAM + 1)]
