"""Lexical retrieval for the reference engine: an analyzer and an in-memory BM25 index.

The index is written in plain Python (no numpy, no SQLite) because it must stay fast for both
writes (one item at a time, tens of thousands per second) and ranked reads filtered to a few
nodes. Postings are partitioned by node, so a node filter is applied while scoring, never by
post-filtering a short top-k.

Scoring is Okapi BM25 (k1 = 1.2, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5)), N and df
over the whole tenant). It is exact while the query's postings inside the selected nodes number
at most ``budget``. Beyond that, in the spirit of Lucene's common-terms query, only the rarest
terms that fit the budget select candidates and the commoner terms rescore the best of them,
so a very long query over a very large tenant stays within a few milliseconds.
"""

from __future__ import annotations

import heapq
import math
import re
import string
from array import array
from collections import deque
from collections.abc import Collection, Mapping, Sequence
from operator import neg
from typing import NamedTuple

K1 = 1.2
B = 0.75
DEFAULT_BUDGET = 4096
_DRIFT = 0.02
_FRESH_MAX = 65536
_WORD = re.compile(r"[^\W_]+")
_ASCII_PUNCTUATION = string.punctuation + "".join(map(chr, range(32)))
_ASCII_SEPARATORS = bytes.maketrans(_ASCII_PUNCTUATION.encode(), b" " * len(_ASCII_PUNCTUATION))
_UNICODE_PUNCTUATION = "\u2018\u2019\u201c\u201d\u2013\u2014\u2026\u00ab\u00bb"
_SEPARATORS = str.maketrans(dict.fromkeys(_ASCII_PUNCTUATION + _UNICODE_PUNCTUATION, " "))
_CACHE_MAX = 200_000

STOPWORDS = frozenset(
    """a about above after again against all am an and any are aren as at be because been before
    being below between both but by can cannot could couldn did didn do does doesn doing don down
    during each else ever few for from further had hadn has hasn have haven having he her here
    hers herself him himself his how i if in into is isn it its itself just ll me might more most
    must mustn my myself no nor not now of off on once only or other ought our ours ourselves out
    over own re same shall shan she should shouldn so some such than that the their theirs them
    themselves then there these they this those through to too under until up upon us ve very
    was wasn we were weren what when where which while who whom whose why will with won would
    wouldn you your yours yourself yourselves""".split()
)

_analyzed: dict[str, str] = {}


def analyze(text: str) -> list[str]:
    """The index terms of ``text``, in order and with repeats.

    Lower-cased unicode words, stopwords and single letters (not digits) dropped, then lightly stemmed
    (:func:`stem`), so that ``moved``/``moves``/``moving`` meet. Never raises on any input.
    """
    words = flatten(text).split()
    try:
        return list(filter(None, map(_analyzed.__getitem__, words)))
    except KeyError:
        if len(_analyzed) > _CACHE_MAX:
            _analyzed.clear()
        return [term for word in words for part in _parts(word) if (term := _term(part))]


def flatten(text: str) -> str:
    """``text`` lower-cased with punctuation turned into spaces (words are then ``split()``)."""
    lowered = text.lower()
    if lowered.isascii():
        return lowered.encode().translate(_ASCII_SEPARATORS).decode()
    return lowered.translate(_SEPARATORS)


def _parts(word: str) -> list[str]:
    """``word`` itself, or its pieces when it still holds non-ASCII punctuation."""
    return [word] if word.isalnum() else _WORD.findall(word)


def _term(word: str) -> str:
    """The (cached) index term of one word; ``""`` when it is not indexed."""
    term = _analyzed.get(word)
    if term is None:
        term = "" if word in STOPWORDS or (len(word) < 2 and not word.isdigit()) else stem(word)
        if word.isalnum():
            _analyzed[word] = term
    return term


def stem(word: str) -> str:
    """A light English suffix stripper (plurals, -ed, -ing, final e); idempotent on its output.

    It conflates more loosely than Porter's stemmer but is applied to documents and queries
    alike, which is all matching needs.
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith(("ies", "ied")) and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "ches", "shes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        base = word[: -len(suffix)]
        if word.endswith(suffix) and len(base) >= 3 and any(v in base for v in "aeiouy"):
            word = base
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


class LexicalIndex:
    """BM25 over one tenant's documents, with postings partitioned by node code.

    Documents are dense integer ids handed out by the caller in increasing order (0, 1, 2, ...);
    node codes are small non-negative integers. Not thread-safe: the engine serialises calls.

    The length normalisation uses an average document length refreshed whenever it drifts by
    more than 2 %, so scores may differ from textbook BM25 by that much at most.
    """

    def __init__(self, budget: int = DEFAULT_BUDGET) -> None:
        """``budget`` is the number of postings a query may score exactly (0 = no limit)."""
        self.budget = budget
        # term -> node -> documents. Term first: a query term's nodes and its document
        # frequency are then in one small dict (node-first dicts made pre-turns 14 % slower).
        self._post = _Postings()
        # term -> node -> {doc: tf} for the documents holding the term more than once.
        self._repeats: dict[str, dict[int, dict[int, int]]] = {}
        # Postings of recent writes, term -> documents, not yet spread over the nodes. A write
        # appends to a few arrays of one small hot dict instead of to arrays scattered over
        # every (term, node) pair, and spreading one term's batch touches only that term's
        # node arrays: about 20 % faster writes at 100k turns. Once more than _FRESH_MAX postings
        # wait, each write spreads the oldest terms, so no write pays for a whole batch;
        # queries spread their own terms first, so nothing is ever missed.
        self._fresh: dict[str, array[int]] = {}
        self._fresh_order: deque[str] = deque()
        self._fresh_size = 0
        self._node = array("I")
        # Each document's terms packed in one string (``\0t1\0\0t2\0``): strings are not
        # tracked by the garbage collector, tuples are, and 100k of them slowed every write.
        self._terms: list[str | None] = []
        self._dl = array("I")
        self._unit = array("d")
        self._avgdl = 1.0
        self._live = 0
        self._total = 0

    def add(self, doc: int, node: int, text: str) -> None:
        """Index ``text`` as document ``doc`` (must equal the number of documents added so far).

        Raises:
            ValueError: ``doc`` is out of order.
        """
        if doc != len(self._terms):
            raise ValueError(f"document {doc} out of order (expected {len(self._terms)})")
        terms = analyze(text)
        size = len(terms)
        unique = set(terms)
        self._terms.append("\0" + "\0\0".join(terms) + "\0" if terms else "")
        self._dl.append(size)
        self._unit.append((K1 + 1) / (1 + K1 * (1 - B + B * size / self._avgdl)))
        self._live += 1
        self._total += size
        self._node.append(node)
        fresh = self._fresh
        for term in unique:
            plist = fresh.get(term)
            if plist is None:
                fresh[term] = array("I", (doc,))
                self._fresh_order.append(term)
            else:
                plist.append(doc)
        if len(unique) != size:
            self._note_repeats(doc, node, terms)
        self._fresh_size += len(unique)
        while self._fresh_size > _FRESH_MAX:
            self._spread((self._fresh_order.popleft(),))

    def remove(self, docs: Mapping[int, int]) -> None:
        """Drop documents, given as ``{doc: node code}``; unknown or removed ones are ignored."""
        self._spread(list(self._fresh))
        self._fresh_order.clear()
        doomed: dict[tuple[int, str], set[int]] = {}
        for doc, node in docs.items():
            packed = self._terms[doc] if 0 <= doc < len(self._terms) else None
            if packed is None:
                continue
            for term in set(packed.split("\0")) - {""}:
                doomed.setdefault((node, term), set()).add(doc)
                self._repeats.get(term, {}).get(node, {}).pop(doc, None)
            self._terms[doc] = None
            self._live -= 1
            self._total -= self._dl[doc]
        for (node, term), gone in doomed.items():
            plist = self._post[term][node]
            plist[:] = array("I", (doc for doc in plist if doc not in gone))

    def search(self, query: Sequence[str], nodes: Collection[int], k: int) -> list[tuple[int, float]]:
        """The ``k`` best ``(doc, score)`` pairs among documents in ``nodes``, best first.

        ``query`` holds analyzed terms (see :func:`analyze`), OR-ed; terms absent from the tenant
        are ignored. Equal scores are ordered oldest first.
        """
        plan = self._plan(query, nodes)
        if k <= 0 or not plan:
            return []
        self._refresh()
        split = self._essential(plan)
        largest = max(range(split), key=lambda i: sum(map(len, plan[i].lists)))
        acc = self._seed(plan[largest])
        for i in range(split):
            if i != largest:
                self._accumulate(acc, plan[i])
        while len(acc) < k and split < len(plan):
            self._accumulate(acc, plan[split])
            split += 1
        if split < len(plan):
            acc = self._rescore(acc, plan[split:], k)
        return _top(acc, k)

    def _unit_weight(self, dl: int) -> float:
        """BM25's term-frequency factor for tf = 1 in a document of ``dl`` terms."""
        return (K1 + 1) / (1 + K1 * (1 - B + B * dl / self._avgdl))

    def _spread(self, terms: Sequence[str]) -> None:
        """Move the fresh postings of ``terms`` into their per-node arrays."""
        node_of = self._node
        for term in terms:
            docs = self._fresh.pop(term, None)
            if docs:
                self._fresh_size -= len(docs)
                by_node = self._post[term]
                for doc in docs:
                    by_node[node_of[doc]].append(doc)

    def _note_repeats(self, doc: int, node: int, terms: list[str]) -> None:
        """Record the terms ``doc`` holds more than once."""
        counts: dict[str, int] = {}
        for term in terms:
            counts[term] = counts.get(term, 0) + 1
        for term, tf in counts.items():
            if tf > 1:
                self._repeats.setdefault(term, {}).setdefault(node, {})[doc] = tf

    def _tf_weight(self, doc: int, tf: int) -> float:
        """BM25's term-frequency factor for ``tf`` occurrences in ``doc``."""
        return tf * (K1 + 1) / (tf + K1 * (1 - B + B * self._dl[doc] / self._avgdl))

    def _refresh(self) -> None:
        """Recompute the per-document weights once the average length has drifted."""
        avgdl = self._total / self._live if self._live else 1.0
        if abs(avgdl - self._avgdl) > _DRIFT * self._avgdl:
            self._avgdl = avgdl
            self._unit = array("d", map(self._unit_weight, self._dl))

    def _plan(self, query: Sequence[str], nodes: Collection[int]) -> list[_QueryTerm]:
        """The query's terms that occur in ``nodes``, rarest (highest idf) first."""
        self._spread([term for term in query if term in self._fresh])
        plan = []
        for term in dict.fromkeys(query):
            by_node = self._post.get(term, {})
            lists = [plist for n in nodes if (plist := by_node.get(n))]
            if lists:
                # Document frequency is summed over the nodes here rather than kept per write:
                # one counter update per term was a fifth of the write cost.
                df = sum(map(len, by_node.values()))
                idf = math.log(1 + (self._live - df + 0.5) / (df + 0.5))
                repeated = self._repeats.get(term, {})
                repeats = [found for n in nodes if (found := repeated.get(n))]
                plan.append(_QueryTerm(idf, term, lists, repeats))
        plan.sort(key=lambda row: (-row.idf, row.term))
        return plan

    def _essential(self, plan: list[_QueryTerm]) -> int:
        """How many of the rarest terms select candidates: all of them while within budget."""
        sizes = [sum(map(len, row.lists)) for row in plan]
        if not self.budget or sum(sizes) <= self.budget:
            return len(plan)
        used, split = sizes[0], 1
        while split < len(plan) and used + sizes[split] <= self.budget:
            used += sizes[split]
            split += 1
        return split

    def _seed(self, row: _QueryTerm) -> dict[int, float]:
        """A new accumulator holding one term's BM25 share.

        A document sits in one node only, so the term's lists are disjoint and ``dict.update``
        can fill them in C, three times faster than adding posting by posting; the term with
        the most postings is seeded this way.
        """
        acc: dict[int, float] = {}
        weigh = row.idf.__mul__
        for plist in row.lists:
            acc.update(zip(plist, map(weigh, map(self._unit.__getitem__, plist)), strict=True))
        self._correct(acc, row)
        return acc

    def _accumulate(self, acc: dict[int, float], row: _QueryTerm) -> None:
        """Add one term's BM25 share to ``acc`` for every document in its posting lists."""
        unit = self._unit
        idf = row.idf
        get = acc.get
        for plist in row.lists:
            for doc in plist:
                acc[doc] = get(doc, 0.0) + idf * unit[doc]
        self._correct(acc, row)

    def _correct(self, acc: dict[int, float], row: _QueryTerm) -> None:
        """Replace the tf = 1 share counted for documents holding the term more than once."""
        unit = self._unit
        idf = row.idf
        for repeats in row.repeats:
            for doc, tf in repeats.items():
                acc[doc] += idf * (self._tf_weight(doc, tf) - unit[doc])

    def _rescore(self, acc: dict[int, float], rest: list[_QueryTerm], k: int) -> dict[int, float]:
        """Add the commoner terms' share to the best candidates (only they can still reach the top k)."""
        out = {}
        for doc, score in _top(acc, max(4 * k, 32)):
            packed = self._terms[doc] or ""
            for row in rest:
                tf = packed.count(f"\0{row.term}\0")
                if tf:
                    score += row.idf * self._tf_weight(doc, tf)
            out[doc] = score
        return out


class _QueryTerm(NamedTuple):
    """One query term as a search plans it: its idf and, inside the searched nodes, its posting
    lists and the documents where it occurs more than once (``{doc: tf}``)."""

    idf: float
    term: str
    lists: list[array[int]]
    repeats: list[dict[int, int]]


class _Postings(dict[str, "_TermPostings"]):
    """term -> node -> documents, creating what a write needs on first use."""

    def __missing__(self, term: str) -> _TermPostings:
        by_node = self[term] = _TermPostings()
        return by_node


class _TermPostings(dict[int, "array[int]"]):
    """One term's postings: node code -> documents holding the term, in write order."""

    def __missing__(self, node: int) -> array[int]:
        plist = self[node] = array("I")
        return plist


def _top(acc: dict[int, float], k: int) -> list[tuple[int, float]]:
    """The ``k`` best ``(doc, score)`` pairs, best first, equal scores oldest first."""
    best = heapq.nlargest(k, zip(acc.values(), map(neg, acc.keys()), strict=True))
    return [(-negated, score) for score, negated in best]
