"""Fused ranking for the reference engine: every signal votes on one pool of candidates.

The pool is the union of the BM25 top list and the dense top list (both exact or ANN indexes
hand in their own best). Each candidate is then scored on four signals, each normalised to
[0, 1] by the best value in the pool:

- ``bm25``: the Okapi BM25 score over content words (0 outside the BM25 list);
- ``words``: the weighted share of the query's distinct words the candidate holds, stopwords
  kept at a fifth of a content word's weight, so "what did we switch off" still counts "off";
- ``grams``: the share of the query's character trigrams (per word, padded) found in the
  candidate, which meets near-miss spellings and inflections the stemmer misses;
- ``dense``: cosine similarity, shifted so the worst candidate in the pool is 0.

The fused score is their weighted sum, plus, with a recency key per document, a bounded bonus
in proportion to a candidate's recency rank in the pool (at most :data:`RECENCY`), so that among
candidates matching about equally the newer one comes first. Features of a document are cached
(texts never change under an id).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memeval.engines.reference_index import STOPWORDS, stem
from memeval.freshness import Shape, asked_words, replaces, shape

W_BM25 = 1.0
W_WORDS = 0.6
W_GRAMS = 0.5
W_DENSE = 1.0
RECENCY = 0.25
STOPWORD_WEIGHT = 0.2
CONTENDER_SHARE = 0.5
SUPERSEDE_SPAN = 40
# Demoting can push an item out of its section, so it takes near-duplicates (the pack's own
# move to a final section keeps the item and asks for less).
SUPERSEDE_SHARE = 0.7
_GRAM = 3
_CACHE_MAX = 100_000


class Features:
    """Cached per-document word and trigram sets (documents are immutable under an id)."""

    def __init__(self, text_of: Callable[[int], str]) -> None:
        self._text_of = text_of
        self._cache: dict[int, tuple[frozenset[str], frozenset[str]]] = {}
        self._shapes: dict[int, Shape] = {}

    def of(self, doc: int) -> tuple[frozenset[str], frozenset[str]]:
        """``doc``'s stemmed words (stopwords kept) and its character trigrams."""
        found = self._cache.get(doc)
        if found is None:
            if len(self._cache) > _CACHE_MAX:
                self._cache.clear()
            found = self._cache[doc] = text_features(self._text_of(doc))
        return found

    def shape(self, doc: int) -> Shape:
        """``doc``'s :func:`memeval.freshness.shape`."""
        found = self._shapes.get(doc)
        if found is None:
            if len(self._shapes) > _CACHE_MAX:
                self._shapes.clear()
            found = self._shapes[doc] = shape(self._text_of(doc))
        return found

    def drop(self, docs: Sequence[int]) -> None:
        """Forget the features of removed documents."""
        for doc in docs:
            self._cache.pop(doc, None)
            self._shapes.pop(doc, None)


def text_features(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The stemmed word set of ``text`` (stopwords kept) and the trigrams of its words."""
    words = _terms(text)
    return words, frozenset(g for w in words for g in _grams(w))


def rank(
    query: str,
    lexical: Sequence[tuple[int, float]],
    dense: Sequence[tuple[int, float]] | None,
    features: Features,
    keys: Sequence[int] | None,
    dated: Callable[[int], bool] = bool,
) -> list[tuple[int, float]]:
    """The pool of ``lexical`` and ``dense`` candidates, best first, as ``(doc, fused score)``.

    Ties are broken newest first with ``keys`` (recency key per document), else oldest first.
    With ``keys``, superseded candidates go after the rest (:func:`demote_superseded`; ``dated``
    tells whether a key belongs to a dated item).
    """
    bm25 = dict(lexical)
    near = dict(dense or ())
    pool = list(dict.fromkeys([*bm25, *near]))
    if not pool:
        return []
    qwords, qgrams = _query_features(query)
    weights = {w: STOPWORD_WEIGHT if w in STOPWORDS else 1.0 for w in qwords}
    total = sum(weights.values()) or 1.0
    word_share = {d: sum(weights[w] for w in qwords & features.of(d)[0]) / total for d in pool}
    gram_share = {d: len(qgrams & features.of(d)[1]) / (len(qgrams) or 1) for d in pool}
    scores = dict.fromkeys(pool, 0.0)
    _add(scores, bm25, W_BM25)
    _add(scores, word_share, W_WORDS)
    _add(scores, gram_share, W_GRAMS)
    if near:
        low = min(near.values())
        _add(scores, {d: s - low for d, s in near.items()}, W_DENSE)
    if keys is None:
        return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
    # Recency ranks only the contenders: unrelated newer items must not push a superseding
    # value's recency rank down.
    best = max(scores.values())
    order = sorted((d for d in pool if scores[d] >= CONTENDER_SHARE * best), key=keys.__getitem__)
    span = max(len(order) - 1, 1)
    for i, doc in enumerate(order):
        scores[doc] += RECENCY * i / span
    ranked = sorted(scores.items(), key=lambda pair: (-pair[1], -keys[pair[0]]))
    return demote_superseded(ranked, query, features, keys, dated)


def demote_superseded(
    ranked: list[tuple[int, float]], query: str, features: Features, keys: Sequence[int], dated: Callable[[int], bool]
) -> list[tuple[int, float]]:
    """``ranked`` with each superseded candidate among the first :data:`SUPERSEDE_SPAN` moved
    after them, in rank order (see :func:`memeval.freshness.replaces`; both items dated).

    Scores are kept, so a demoted item shows its own (higher) score below a lower one.
    """
    head = [pair for pair in ranked[:SUPERSEDE_SPAN] if dated(keys[pair[0]])]
    asked = asked_words(query)
    stale = {old for old, _ in head for new, _ in head
             if keys[new] > keys[old] and replaces(features.shape(new), features.shape(old), asked, SUPERSEDE_SHARE)}
    if not stale:
        return ranked
    return [p for p in ranked if p[0] not in stale] + [p for p in ranked if p[0] in stale]


def _add(scores: dict[int, float], signal: dict[int, float], weight: float) -> None:
    """Add ``signal`` normalised by its best value (a signal that is all zero adds nothing)."""
    best = max(signal.values(), default=0.0)
    if best > 0:
        for doc, value in signal.items():
            scores[doc] += weight * value / best


def _query_features(query: str) -> tuple[frozenset[str], frozenset[str]]:
    """The query's stemmed words and the trigrams of its content words."""
    words = _terms(query)
    content = [w for w in words if w not in STOPWORDS and len(w) > 2]
    return words, frozenset(g for w in content for g in _grams(w))


def _terms(text: str) -> frozenset[str]:
    """Lower-cased words, stemmed unless they are stopwords (kept as they are)."""
    words = "".join(ch if ch.isalnum() else " " for ch in text.lower()).split()
    return frozenset(w if w in STOPWORDS else stem(w) for w in words)


def _grams(word: str) -> list[str]:
    padded = f" {word} "
    return [padded[i : i + _GRAM] for i in range(len(padded) - _GRAM + 1)]
