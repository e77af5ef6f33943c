"""Lexical retrieval for the reference engine: an analyzer and an exact BM25 index (numpy).

Scoring is Okapi BM25 (k1 = 1.2, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5)), N, df and
the average document length over the tenant's live documents at the time of the search), the
same ranking as an exhaustive scorer: the top k is exact by construction, not approximated.

Postings live in immutable numpy segments (:mod:`memeval.engines.reference_postings`); writes
queue their term ids and become a segment at the next search, or every 4,096 documents, so a
write is visible to the next search. A search prunes with MaxScore: a lower bound on the k-th
best score (from the documents of the rarest terms) marks the commonest terms whose summed
upper bounds stay below it as non-essential; only documents holding an essential term are
candidates, and the non-essential terms are looked up for the candidates that can still reach
the top k. The node filter is applied to the candidates inside the search.
"""

from __future__ import annotations

import json
import math
import re
import string
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from memeval.engines import reference_postings as postings
from memeval.engines.reference_postings import Segment

K1 = 1.2
B = 0.75
FLUSH = 4096
# A search whose candidates exceed this share of the tenant accumulates into one dense array.
_DENSE_SHARE = 8
# Documents of the rarest terms scored in full to bound the k-th best score from below.
_PROBE = 1024
_SLACK = 1e-9
# Below this many postings a search scores every one of them (pruning would cost more).
_DIRECT = 32768
_PEAK_SLACK = 0.05
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
    """BM25 over one tenant's documents, each tagged with a node code, searched within nodes.

    Documents are dense integer ids handed out by the caller in increasing order (0, 1, 2, ...);
    node codes are small non-negative integers. Not thread-safe: the engine serialises calls.
    """

    def __init__(self) -> None:
        self._tid: dict[str, int] = {}
        self._words: dict[str, int] = {}
        self._segments: list[Segment] = []
        self._queued: list[int] = []
        self._lengths: list[int] = []
        self._queued_nodes: list[int] = []
        self._count = 0
        self._node = np.zeros(0, dtype=np.int32)
        self._dl = np.zeros(0, dtype=np.int32)
        self._live = np.zeros(0, dtype=bool)
        self._alive = 0
        self._total = 0
        self._width = 0
        self._last_plan: tuple[tuple[object, ...], list[_Term]] = ((), [])
        self._norms: tuple[tuple[int, ...], Any] = ((), None)
        self._peaks: dict[int, tuple[float, int, float]] = {}

    def add(self, doc: int, node: int, text: str) -> None:
        """Index ``text`` as document ``doc``; see :meth:`add_many`."""
        self.add_many(doc, (node,), (text,))

    def add_many(self, first: int, nodes: Sequence[int], texts: Sequence[str]) -> None:
        """Index ``texts`` as documents ``first``, ``first + 1``, ... in ``nodes`` (one each).

        Raises:
            ValueError: ``first`` is not the number of documents added so far.
        """
        if first != self._count + len(self._lengths):
            raise ValueError(f"document {first} out of order (expected {self._count + len(self._lengths)})")
        words, queued, lengths = self._words, self._queued, self._lengths
        for text in texts:
            split = flatten(text).split()
            try:
                ids = list(map(words.__getitem__, split))
            except KeyError:
                ids = self._ids_of(split)
            queued.extend(ids)
            lengths.append(len(ids))
        self._queued_nodes.extend(nodes)
        if len(lengths) >= FLUSH:
            self._flush()

    def remove(self, docs: Collection[int]) -> None:
        """Drop documents; unknown or removed ones are ignored."""
        self._flush()
        gone = np.array([doc for doc in docs if 0 <= doc < self._count], dtype=np.int64)
        gone = gone[self._live[gone]]
        if not gone.size:
            return
        self._live[gone] = False
        self._alive -= int(gone.size)
        self._total -= int(self._dl[gone].sum())
        terms = len(self._tid)
        self._segments = [postings.purge(segment, self._live, terms) for segment in self._segments]

    def search(self, query: Sequence[str], nodes: Collection[int], k: int) -> list[tuple[int, float]]:
        """The ``k`` best ``(doc, score)`` pairs among documents in ``nodes``, best first.

        ``query`` holds analyzed terms (see :func:`analyze`), OR-ed, each counted once; terms
        absent from the tenant are ignored. Equal scores are ordered oldest first.
        """
        self._flush()
        if k <= 0 or not self._alive:
            return []
        lut = np.zeros(self._width, dtype=bool)
        lut[[n for n in nodes if 0 <= n < self._width]] = True
        if not lut.any():
            return []
        terms = self._plan(query)
        if not terms:
            return []
        inside = None if lut.all() else lut
        if sum(term.docs.size for term in terms) <= _DIRECT:
            return _top(*self._shares(terms, inside), k)
        floor = self._probe(terms, inside, k)
        cand, score, rest = self._essential(terms, inside, floor, k)
        norm = self._norm(cand)
        for term in rest:
            score += self._lookup(term, cand, norm)
        return _top(cand, score, k)

    def save(self, folder: Path) -> None:
        """Write the index under ``folder`` (created if missing); :meth:`load` reads it back."""
        self._flush()
        folder.mkdir(parents=True, exist_ok=True)
        terms = len(self._tid)
        merged = postings.merge(self._segments, terms) if self._segments else postings.build(
            np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32), terms, 0)
        postings.save(merged, folder)
        for name in ("node", "dl", "live"):
            np.save(folder / f"{name}.npy", getattr(self, f"_{name}")[: self._count])
        meta = {"terms": sorted(self._tid, key=self._tid.__getitem__), "count": self._count, "size": merged.size}
        (folder / "lexical.json").write_text(json.dumps(meta), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path) -> LexicalIndex:
        """The index :meth:`save` wrote under ``folder``; postings stay memory-mapped until merged.

        Raises:
            OSError: a file is missing or unreadable.
            ValueError: a file is not what :meth:`save` writes.
        """
        meta = json.loads((folder / "lexical.json").read_text(encoding="utf-8"))
        index = cls()
        index._tid = {term: tid for tid, term in enumerate(meta["terms"])}
        index._segments = [postings.load(folder, meta["size"])] if meta["count"] else []
        index._node, index._dl, index._live = (np.load(folder / f"{name}.npy") for name in ("node", "dl", "live"))
        index._count = int(meta["count"])
        index._alive = int(index._live.sum())
        index._total = int(index._dl[index._live].sum())
        index._width = int(index._node.max()) + 1 if index._count else 0
        return index

    def _ids_of(self, words: list[str]) -> list[int]:
        """Term ids of ``words`` (-1 for a word that is not indexed), caching single-term words."""
        if len(self._words) > _CACHE_MAX:
            self._words.clear()
        ids = []
        for word in words:
            tid = self._words.get(word)
            if tid is not None:
                ids.append(tid)
                continue
            found = [self._tid.setdefault(term, len(self._tid)) for part in _parts(word) if (term := _term(part))]
            if len(found) <= 1:
                self._words[word] = found[0] if found else -1
            ids.extend(found or (-1,))
        return ids

    def _flush(self) -> None:
        """Turn the queued documents into a segment."""
        count = len(self._lengths)
        if not count:
            return
        first, end = self._count, self._count + count
        tids = np.array(self._queued, dtype=np.int64)
        docs = np.repeat(np.arange(first, end, dtype=np.int32), self._lengths)
        valid = tids >= 0
        tids, docs = tids[valid], docs[valid]
        dl = np.bincount(docs - first, minlength=count)
        self._grow(end)
        self._node[first:end] = self._queued_nodes
        self._dl[first:end] = dl
        self._live[first:end] = True
        self._width = max(self._width, max(self._queued_nodes) + 1)
        self._count, self._alive, self._total = end, self._alive + count, self._total + int(dl.sum())
        self._queued, self._lengths, self._queued_nodes = [], [], []
        terms = len(self._tid)
        self._segments = postings.compact([*self._segments, postings.build(tids, docs, terms, count)], terms)

    def _grow(self, size: int) -> None:
        """Make room for ``size`` documents in the per-document arrays (capacity doubles)."""
        if len(self._node) >= size:
            return
        capacity = max(size, 2 * len(self._node), 1024)
        for name in ("_node", "_dl", "_live"):
            old = getattr(self, name)
            grown = np.zeros(capacity, dtype=old.dtype)
            grown[: self._count] = old[: self._count]
            setattr(self, name, grown)

    def _plan(self, query: Sequence[str]) -> list[_Term]:
        """The query's terms present in the tenant, with their idf, upper bound and postings;
        the last plan is kept until the next write (a pre-turn asks one query per section)."""
        key = (tuple(query), self._count, self._alive)
        if self._last_plan[0] == key:
            return self._last_plan[1]
        plan = []
        for term in dict.fromkeys(query):
            tid = self._tid.get(term)
            if tid is None:
                continue
            parts = [segment.postings(tid) for segment in self._segments]
            docs = np.concatenate([d for d, _ in parts]) if len(parts) > 1 else parts[0][0]
            if not docs.size:
                continue
            tfs = np.concatenate([t for _, t in parts]) if len(parts) > 1 else parts[0][1]
            idf = math.log(1 + (self._alive - docs.size + 0.5) / (docs.size + 0.5))
            plan.append(_Term(idf, idf * self._peak(tid, docs, tfs), docs, tfs))
        self._last_plan = (key, plan)
        return plan

    def _peak(self, tid: int, docs: Any, tfs: Any) -> float:
        """An upper bound on term ``tid``'s tf factor ``tf (k1 + 1) / (tf + norm)`` in any of its
        documents: the largest factor over its postings at an average length 5 % above the
        current one (the factor grows with the average), kept until the average outgrows it and
        extended to the documents written since. Removals only lower the true largest factor."""
        avgdl = self._total / self._alive
        limit, covered, peak = self._peaks.get(tid, (0.0, 0, 0.0))
        if avgdl > limit:
            limit, covered, peak = avgdl * (1 + _PEAK_SLACK), 0, 0.0
        if covered < self._count:
            start = int(np.searchsorted(docs, covered))
            tf = tfs[start:].astype(np.float64)
            norm = K1 * (1 - B + B * self._dl[docs[start:]] / limit)
            if tf.size:
                peak = max(peak, float((tf * (K1 + 1) / (tf + norm)).max()))
            self._peaks[tid] = (limit, self._count, peak)
        return peak

    def _norm(self, docs: Any) -> Any:
        """BM25's length normalisation ``k1 (1 - b + b dl / avgdl)`` of each of ``docs``, from a
        per-document table rebuilt after writes (one pass over the tenant, shared by searches)."""
        key = (self._count, self._alive, self._total)
        if self._norms[0] != key:
            dl = self._dl[: self._count].astype(np.float64)
            self._norms = (key, K1 * (1 - B) + (K1 * B / (self._total / self._alive)) * dl)
        return self._norms[1][docs]

    @staticmethod
    def _lookup(term: _Term, cand: Any, norm: Any) -> Any:
        """``term``'s BM25 share for each candidate document (0 where it does not occur), given
        the candidates' :meth:`_norm`."""
        at = np.minimum(np.searchsorted(term.docs, cand), term.docs.size - 1)
        tf = np.where(term.docs[at] == cand, term.tfs[at], 0).astype(np.float64)
        return term.idf * tf * (K1 + 1) / (tf + norm)

    def _probe(self, terms: list[_Term], lut: Any, k: int) -> float:
        """A lower bound on the k-th best score in the section: the k-th best full score among
        up to :data:`_PROBE` documents of the rarest terms (0 when they hold fewer than k)."""
        found, size = [], 0
        for term in sorted(terms, key=lambda t: -t.bound):
            docs = self._section(term, lut)[0]
            found.append(docs)
            size += docs.size
            if size >= k:
                break
        cand = np.unique(np.concatenate(found))[:_PROBE]
        if cand.size < k:
            return 0.0
        norm = self._norm(cand)
        score = sum((self._lookup(term, cand, norm) for term in terms), np.zeros(cand.size))
        return float(np.partition(score, cand.size - k)[cand.size - k])

    def _shares(self, terms: list[_Term], lut: Any) -> tuple[Any, Any]:
        """Every document of ``terms`` in the section (increasing) and the sum of their shares."""
        sections = [self._section(term, lut) for term in terms]
        docs = np.concatenate([d for d, _ in sections])
        tf = np.concatenate([t for _, t in sections]).astype(np.float64)
        idf = np.repeat([t.idf for t in terms], [d.size for d, _ in sections])
        weight = idf * tf * (K1 + 1) / (tf + self._norm(docs))
        if docs.size * _DENSE_SHARE <= self._count:
            cand, inverse = np.unique(docs, return_inverse=True)
            return cand, np.bincount(inverse, weights=weight)
        dense = np.bincount(docs, weights=weight, minlength=self._count)
        cand = np.flatnonzero(dense)
        return cand, dense[cand]

    def _essential(self, terms: list[_Term], lut: Any, floor: float, k: int) -> tuple[Any, Any, list[_Term]]:
        """Candidates (documents of the essential terms that can still reach the top k), their
        essential terms' share, and the non-essential terms still to be looked up."""
        ordered = sorted(terms, key=lambda t: t.bound)
        bounds = np.cumsum([t.bound for t in ordered])
        split = int(np.searchsorted(bounds, floor * (1 - _SLACK), side="left"))
        rest, essential = ordered[:split], ordered[split:]
        cand, score = self._shares(essential, lut)
        if cand.size > k:
            floor = max(floor, float(np.partition(score, cand.size - k)[cand.size - k]))
        keep = score + float(bounds[split - 1] if split else 0.0) >= floor * (1 - _SLACK)
        return cand[keep], score[keep], rest

    def _section(self, term: _Term, lut: Any) -> tuple[Any, Any]:
        """``term``'s postings inside the nodes where ``lut`` is set (all of them if it is None)."""
        if lut is None:
            return term.docs, term.tfs
        inside = lut[self._node[term.docs]]
        return term.docs[inside], term.tfs[inside]


class _Term(NamedTuple):
    """One query term as a search plans it: idf, an upper bound on its BM25 share in any
    document, and its postings over the whole tenant."""

    idf: float
    bound: float
    docs: Any
    tfs: Any


def _top(cand: Any, score: Any, k: int) -> list[tuple[int, float]]:
    """The ``k`` best ``(doc, score)`` pairs, best first, equal scores oldest first."""
    if cand.size > k:
        keep = score >= np.partition(score, cand.size - k)[cand.size - k]
        cand, score = cand[keep], score[keep]
    order = np.lexsort((cand, -score))[:k]
    return [(int(doc), float(value)) for doc, value in zip(cand[order], score[order], strict=True)]
