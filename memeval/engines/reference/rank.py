"""Fused ranking for the reference engine: every signal votes on one pool of candidates.

The pool is the union of the BM25 top list, the dense top list, a few filler candidates (the
engine passes the newest items) and, on the engine's second pass, the two *feedback* lists. Each
candidate is scored on these signals:

- ``words``: the weighted share of the query's distinct words the candidate holds (a content
  word by its stem at a word start, so ``deploy`` meets ``deployed``; a stopword as a whole
  word at a fifth of the weight, so "what did we switch off" still counts "off");
- ``grams``: per content word of the query, the share of its character trigrams (padded with
  spaces) found in the candidate, counted from two thirds of them on and averaged over the words,
  which meets near-miss spellings and inflections;
- ``bm25``: the Okapi BM25 score over content words (0 outside the BM25 list), normalised by the
  pool's best and then scaled by the best ``words`` share in the pool;
- ``dense``: cosine similarity, shifted so the worst dense candidate is 0 and scaled so the
  best is 1 (all equal: all 1);
- ``feedback``: the same BM25 and cosine for the question joined with the text of the first
  pass's best candidate (pseudo-relevance feedback), so an item that shares no word with the
  question but much with its best answer (a near-twin, the same named party) joins the contest.

``words`` and ``grams`` are absolute shares, saturating at :data:`SATURATION` content words (an
item is about a sentence, so holding six of a long question's words is a full match): a pool
where nothing holds much of the question — a paraphrase — lets the dense signals decide,
instead of promoting whichever item shares one incidental word. With a thread per document, a
turn then gains :data:`THREAD` of the best score among the other candidates of its thread (a
conversation's turns answer together: "my manager is …" sits beside the introduction). With a
recency key per document comes a bounded bonus in proportion to a candidate's recency rank
among the contenders (candidates within half the best score; at most :data:`RECENCY` of the
best score), so that among candidates matching about equally the newer one comes first. Then
a candidate that a newer near-duplicate supersedes goes after the rest
(:func:`demote_superseded`). The text signals are substring tests on the flattened text, a few
microseconds a candidate (a large tenant's pool is measured at once in compiled code with the
``fast`` extra, :mod:`memeval.engines.reference.signals`), so nothing is computed at write time
(the flattened texts of recent candidates are kept, :class:`Texts`); they are measured once per
question and candidate (:meth:`Query.shares`): a recall's two passes and the recalls of one
pack, which asks its question once per section, share one :class:`Query` (:meth:`Texts.query`)
until an item is forgotten.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import itemgetter

from memeval.engines.reference.tuning import DEFAULT, Tuning
from memeval.engines.reference import kernel
from memeval.engines.reference import signals
from memeval.text.analyze import STOPWORDS, analyze, flatten, stem
from memeval.text.supersede import Shape, asked_words, replaces, shape

W_BM25 = 1.0
W_WORDS = 0.6
W_GRAMS = 1.0
W_DENSE = 1.0
W_FEEDBACK = 1.0
THREAD = 0.25
SATURATION = 6.0
FEEDBACK_TERMS = 6
RECENCY = 0.08
STOPWORD_WEIGHT = 0.2
CONTENDER_SHARE = 0.5
# Demoting can push an item out of its section, so it takes near-duplicates (the pack's own
# move to a final section keeps the item and asks for less).
SUPERSEDE_SHARE = 0.7
_GRAM = 3
FUZZY = 0.67
# Queries whose shares a tenant keeps (a pack's four sections ask one; a few spare).
QUERIES = 4
# Flattened texts a tenant keeps (about 200 bytes each).
FLATS = 65_536


class Texts:
    """A tenant's document texts, flattened on demand (the latest :data:`FLATS` kept: a
    document often returns in the next question's pool), and the queries recently asked of them."""

    def __init__(self, text_of: Callable[[int], str], size: Callable[[], int] = lambda: 0,
                 tuning: Tuning = DEFAULT) -> None:
        self._text_of = text_of
        self._size = size
        self._tuning = tuning
        self._flats: dict[int, str] = {}
        self._queries: dict[str, Query] = {}

    def flat(self, doc: int) -> str:
        """``doc``'s text lower-cased, punctuation as spaces, padded with a space each side."""
        flat = self._flats.get(doc)
        if flat is None:
            if len(self._flats) >= FLATS:
                self._flats.clear()
            flat = self._flats[doc] = f" {flatten(self._text_of(doc))} "
        return flat

    def compiled(self) -> bool:
        """Whether the tenant is large enough, and numba installed, for its candidates' shares to
        be measured in compiled code."""
        return kernel.compiles(self._size(), self._tuning)

    def raw(self, doc: int) -> str:
        """``doc``'s text as stored (title and body)."""
        return self._text_of(doc)

    def shape(self, doc: int) -> Shape:
        """``doc``'s :func:`memeval.text.supersede.shape` (cached there)."""
        return shape(self._text_of(doc))

    def query(self, text: str) -> Query:
        """The :class:`Query` for ``text``, holding the shares that the recalls of the same text
        since the last :meth:`forget` measured (a pack asks its question once per section); the
        :data:`QUERIES` most recent texts are kept."""
        asked = self._queries.pop(text, None)
        if asked is None:
            asked = Query(text)
            if len(self._queries) >= QUERIES:
                del self._queries[next(iter(self._queries))]
        self._queries[text] = asked
        return asked

    def forget(self) -> None:
        """Drop the flattened texts and the measured shares: a document's text changed (a
        removed one reads as empty)."""
        self._flats.clear()
        self._queries.clear()


class Query:
    """A query's probes for the text signals: ``(needle, is a stopword)`` words and trigrams, and the
    shares already measured per document (one recall's two passes, and the recalls of one pack
    through :meth:`Texts.query`, measure each candidate once)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._shares: dict[int, tuple[float, float]] = {}
        words = dict.fromkeys(flatten(text).split())
        self.words = [(f" {w} ", True) if w in STOPWORDS else (f" {stem(w)}", False) for w in words]
        self._needles = [needle for needle, _ in self.words]
        self._content = [not stop for _, stop in self.words]
        content = sum(self._content)
        # Counts, not a sum of weights, so that every way of measuring gets the same share to the bit.
        self.total = min(content + STOPWORD_WEIGHT * (len(self.words) - content), SATURATION) or 1.0
        # A content word's trigram probe starts with its stem test, which is its word needle:
        # each probe keeps that needle's position in ``words``.
        at = {w: i for i, w in enumerate(words)}
        self.grams = [(at[w], grams, _spare(len(grams))) for w in words
                      if w not in STOPWORDS and len(w) > 2 for grams in [_grams(w)]]
        self._gram_words = int(min(len(self.grams), SATURATION)) or 1
        self._compiled: signals.Needles | None = None

    def shares(self, doc: int, texts: Texts) -> tuple[float, float]:
        """``doc``'s ``words`` and ``grams`` shares (see the module docstring), measured once."""
        found = self._shares.get(doc)
        if found is None:
            found = self._shares[doc] = self.measure(texts.flat(doc))
        return found

    def measure_all(self, docs: Iterable[int], texts: Texts) -> None:
        """Measure the shares of the ``docs`` not measured yet, in compiled code for a large
        tenant (:mod:`memeval.engines.reference.signals`, the same shares as :meth:`measure`)."""
        if not texts.compiled():
            return
        new = [doc for doc in dict.fromkeys(docs) if doc not in self._shares]
        if not new:
            return
        if self._compiled is None:
            self._compiled = signals.needles(self.words, STOPWORD_WEIGHT, self.total, self.grams, self._gram_words)
        self._shares.update(zip(new, signals.measure(self._compiled, [texts.flat(doc) for doc in new]), strict=True))

    def held(self, docs: Iterable[int], texts: Texts) -> float:
        """The largest ``words`` share among ``docs`` (0 without any)."""
        return max((self.shares(doc, texts)[0] for doc in docs), default=0.0)

    def measure(self, flat: str) -> tuple[float, float]:
        """The ``words`` and ``grams`` shares of the flattened text ``flat``, each at most 1.

        ``words``: the weighted share of the query's words found. ``grams``: the mean over the
        query's content words of the share of their trigrams found, a word counting only from
        :data:`FUZZY` (so stray trigrams are not a match) and fully when its stem is there; the
        mean is taken over at most :data:`SATURATION` words.
        """
        held = list(map(flat.__contains__, self._needles))
        content = sum(compress(self._content, held))
        words = min(1.0, (content + STOPWORD_WEIGHT * (sum(held) - content)) / self.total)
        total = 0.0
        for at, grams, spare in self.grams:
            if held[at]:
                total += 1.0
                continue
            misses = 0
            for gram in grams:
                if gram not in flat:
                    misses += 1
                    if misses > spare:  # below FUZZY whatever the rest holds
                        break
            else:
                total += 1.0 - misses / len(grams)
        return words, min(1.0, total / self._gram_words)


@dataclass(frozen=True)
class Candidates:
    """What one recall ranks: ``(doc, score)`` lists, best first, and filler documents.

    ``recent`` (say, the newest items) only fills the pool; ``feedback_lexical`` and
    ``feedback_dense`` are the lists found for the question joined with the first pass's best
    candidate (:func:`feedback_terms`), empty on the first pass.
    """

    lexical: Sequence[tuple[int, float]]
    dense: Sequence[tuple[int, float]] | None = None
    recent: Sequence[int] = ()
    feedback_lexical: Sequence[tuple[int, float]] = ()
    feedback_dense: Sequence[tuple[int, float]] | None = None

    def pool(self) -> list[int]:
        """Every candidate once, in list order."""
        lists = (self.lexical, self.dense or (), self.feedback_lexical, self.feedback_dense or ())
        return list(dict.fromkeys([*(doc for found in lists for doc, _ in found), *self.recent]))


def rank(
    asked: Query,
    scores: dict[int, float],
    texts: Texts,
    keys: Sequence[int] | None,
    dated: Callable[[int], bool] = bool,
    span: int = 0,
) -> list[tuple[int, float]]:
    """The candidates of ``scores`` (:func:`fuse`'s, which this adds the recency bonus to),
    best first, as ``(doc, fused score)`` (see the module docstring).

    Ties are broken newest first with ``keys`` (recency key per document), else oldest first.
    With ``keys``, superseded candidates among the first ``span`` go after the rest
    (:func:`demote_superseded`; ``dated`` tells whether a key belongs to a dated item).
    """
    if not scores:
        return []
    if keys is None:
        return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
    # Recency ranks only the contenders: unrelated newer items must not push a superseding
    # value's recency rank down.
    best = max(scores.values())
    order = sorted((d for d in scores if scores[d] >= CONTENDER_SHARE * best), key=keys.__getitem__)
    steps = max(len(order) - 1, 1)
    # In proportion to the best score, so the bonus weighs the same against strong and weak pools.
    bonus = RECENCY * best
    for i, doc in enumerate(order):
        scores[doc] += bonus * i / steps
    # Newest first, then best first by a stable sort: equal scores stay newest first.
    newest = sorted(scores, key=keys.__getitem__, reverse=True)
    ranked = sorted(zip(newest, map(scores.__getitem__, newest)), key=itemgetter(1), reverse=True)
    return demote_superseded(ranked, asked.text, texts, keys, dated, span)


def feedback_terms(terms: Sequence[str], text: str) -> list[str]:
    """The query's analyzed ``terms``, then up to :data:`FEEDBACK_TERMS` other terms of
    ``text``, longest first (a cheap stand-in for the rarest), for the feedback BM25 search."""
    asked = list(dict.fromkeys(terms))
    extra = sorted(set(analyze(text)).difference(asked), key=lambda term: (-len(term), term))
    return asked + extra[:FEEDBACK_TERMS]


def fuse(asked: Query, found: Candidates, texts: Texts, threads: Sequence[int] | None = None) -> dict[int, float]:
    """Every signal but recency, summed per candidate of the pool (with ``threads``, each
    document's thread as a code, negative for none, the thread bonus)."""
    scores: dict[int, float] = {}
    best_words = 0.0
    pool = found.pool()
    asked.measure_all(pool, texts)
    for doc in pool:
        words, grams = asked.shares(doc, texts)
        scores[doc] = W_WORDS * words + W_GRAMS * grams
        if words > best_words:
            best_words = words
    # BM25 counts as much as the best candidate holds of the question.
    _add(scores, dict(found.lexical), W_BM25 * best_words)
    _add(scores, _shifted(found.dense), W_DENSE)
    _add(scores, dict(found.feedback_lexical), W_FEEDBACK)
    _add(scores, _shifted(found.feedback_dense), W_FEEDBACK)
    if threads is not None:
        _share_threads(scores, threads)
    return scores


def _shifted(near: Sequence[tuple[int, float]] | None) -> dict[int, float]:
    """Cosines shifted by the worst so the spread decides; equal cosines (one candidate) count
    fully."""
    if not near:
        return {}
    low = min(s for _, s in near)
    spread = max(s for _, s in near) > low
    return {doc: s - low if spread else 1.0 for doc, s in near}


def _share_threads(scores: dict[int, float], threads: Sequence[int]) -> None:
    """Add to each threaded candidate :data:`THREAD` of the best score of another candidate in
    its thread (``threads``: each document's thread code, negative for none)."""
    threaded = [(doc, thread, score) for doc, score in scores.items() if (thread := threads[doc]) >= 0]
    best: dict[int, tuple[float, float]] = {}
    for _, thread, score in threaded:
        top, second = best.get(thread, (0.0, 0.0))
        best[thread] = (score, top) if score > top else (top, max(second, score))
    for doc, thread, score in threaded:
        top, second = best[thread]
        scores[doc] = score + THREAD * (second if score >= top else top)


def demote_superseded(
    ranked: list[tuple[int, float]], query: str, texts: Texts, keys: Sequence[int],
    dated: Callable[[int], bool], span: int,
) -> list[tuple[int, float]]:
    """``ranked`` with each superseded candidate among the first ``span`` moved after them, in
    rank order (see :func:`memeval.text.supersede.replaces`, both items dated, at least
    :data:`SUPERSEDE_SHARE` of their words in common).

    Scores are kept, so a demoted item shows its own (higher) score below a lower one.
    """
    head = [doc for doc, _ in ranked[:span] if dated(keys[doc])]
    if len(head) < 2:
        return ranked
    asked = asked_words(query)
    shapes = {doc: texts.shape(doc) for doc in head}
    stale = {old for old in head for new in head
             if keys[new] > keys[old] and replaces(shapes[new], shapes[old], asked, SUPERSEDE_SHARE)}
    if not stale:
        return ranked
    return [p for p in ranked if p[0] not in stale] + [p for p in ranked if p[0] in stale]


def _add(scores: dict[int, float], signal: dict[int, float], weight: float) -> None:
    """Add ``signal`` normalised by its best value (a signal that is all zero adds nothing)."""
    best = max(signal.values(), default=0.0)
    if best > 0:
        for doc, value in signal.items():
            scores[doc] += weight * value / best


def _spare(count: int) -> int:
    """How many of a word's ``count`` trigrams may be missing while the rest still reach FUZZY."""
    return max(misses for misses in range(count + 1) if (count - misses) / count >= FUZZY) if count else 0


def _grams(word: str) -> list[str]:
    padded = f" {word} "
    return [padded[i : i + _GRAM] for i in range(len(padded) - _GRAM + 1)]
