"""Exact BM25 top k over one tenant's postings within a section of its nodes (numpy, MaxScore).

The score of a document is Okapi BM25's sum over the query terms it holds of
``idf · tf (k1 + 1) / (tf + norm)``, ``norm = k1 (1 - b + b · dl / avgdl)``; the caller passes
each term's idf and an upper bound on that share in any document (:class:`Term`), and every
document's norm. The search returns exactly what scoring every posting would, pruning with
MaxScore:

1. a probe scores in full the documents with the best partial scores over the rarest terms'
   postings; its k-th best score bounds the section's k-th best from below (the floor);
2. the commonest terms whose bounds sum below the floor cannot lift a document without an
   essential (rarer) term into the top k; only documents holding an essential term are
   candidates, and those whose essential share plus the others' bounds stays below the floor
   are dropped. The shares are summed by sorting the postings, or, when they are many, in one
   array over every document, into which non-essential terms are also added while that costs
   less than looking them up for the candidates;
3. the non-essential terms left are looked up for the surviving candidates, commonest last,
   with the floor raised and the candidates pruned again after each.

Floors compare with a relative slack of 1e-9, so that summing shares in another order never
drops a tie. A section covering most of the tenant filters candidates after scoring rather
than every posting before. A query of at most ``Tuning.direct`` postings (in a tenant scored in
compiled code, also at most a ``Tuning.compiled_flat``-th of its documents) is not pruned: its
postings are scored once, in one run for all the sections that ask it (:func:`flat`,
:func:`flat_top_k`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from memeval.engines.reference.tuning import Tuning

K1 = 1.2
B = 0.75
_SLACK = 1e-9


class Term(NamedTuple):
    """One query term as a search sees it: idf, an upper bound on its BM25 share in any
    document, and its postings (documents increasing, term frequencies) over the whole tenant;
    ``nodes`` (each posting's node code) is needed only by a section that filters postings."""

    idf: float
    bound: float
    docs: Any
    tfs: Any
    nodes: Any = None
    tid: int = -1
    """The index's id of the term (-1: not given)."""


def top_k(terms: list[Term], norms: Any, section: Any, share: float, k: int, tuning: Tuning) -> list[tuple[int, float]]:
    """The ``k`` best ``(doc, score)`` pairs over ``terms``, best first, equal scores oldest first.

    ``norms`` holds every document's BM25 length normalisation; ``section`` is None (every
    document) or a pair: every document's node code and a boolean per node code, True for the
    section's nodes; ``share`` is the share of the tenant's live documents the section holds.
    The terms need their ``nodes`` when :func:`filters_postings` says so.
    """
    view = _View(terms, norms, section, share, tuning)
    ranked = sorted(range(len(terms)), key=lambda i: -terms[i].bound)
    used = _probe_size(terms, ranked, tuning.probe_postings)
    cand, score = view.shares(ranked[:used])
    floor = _probe(view, cand, score, ranked[used:], k)
    later = ranked[used:][::-1]  # the other terms, smallest bound first
    bounds = np.cumsum([terms[i].bound for i in later])
    split = int(np.searchsorted(bounds, floor * (1 - _SLACK), side="left"))
    rest = [*reversed(later[:split])]  # non-essential, largest bound first
    essential = later[split:]
    if view.worth_dense(essential):
        cand, score, rest = _dense(view, cand, score, essential, rest, floor)
    else:
        cand, score = view.shares(essential, floor * (1 - _SLACK) - _sum_bounds(terms, rest), (cand, score))
    return _finish(view, cand, score, rest, floor, k)


class Flat(NamedTuple):
    """Every posting of a small query's terms in one run, for the searches of all its sections:
    documents (increasing within each term's run), BM25 shares and node codes."""

    docs: Any
    weight: Any
    nodes: Any


def scores_every_posting(postings: int, tuning: Tuning, compiled_docs: int = 0) -> bool:
    """Whether a query of ``postings`` postings is scored whole (:func:`flat`): below
    ``tuning.direct``, pruning would cost more than it saves; in a tenant of ``compiled_docs``
    documents scored in compiled code (0: not compiled), also at most a
    ``tuning.compiled_flat``-th of them."""
    return postings <= tuning.direct and (not compiled_docs or postings * tuning.compiled_flat <= compiled_docs)


def flat(terms: list[Term], norms: Any, node: Any) -> Flat:
    """The postings of ``terms`` as one :class:`Flat`; ``norms`` and ``node`` hold every
    document's length normalisation and node code."""
    sizes = [term.docs.size for term in terms]
    docs = np.concatenate([term.docs for term in terms])
    idf = np.repeat([term.idf for term in terms], sizes)
    weight = share(idf, np.concatenate([term.tfs for term in terms]), np.take(norms, docs))
    return Flat(docs, weight, np.take(node, docs))


def flat_top_k(found: Flat, lut: Any, k: int) -> list[tuple[int, float]]:
    """The ``k`` best ``(doc, score)`` pairs of ``found`` like :func:`top_k`, within the node
    codes where ``lut`` is True (None: every document)."""
    docs, weight = found.docs, found.weight
    if lut is not None:
        keep = np.take(lut, found.nodes)
        docs, weight = np.compress(keep, docs), np.compress(keep, weight)
    return _top(*_sum_by_doc(docs, weight), k, 0.0)


def seeded_top_k(docs: Any, base: Any, extra: Flat | None, k: int) -> list[tuple[int, float]]:
    """The ``k`` best ``(doc, score)`` pairs, like :func:`top_k`, of a section's ``docs`` scored
    ``base`` (a query's first terms, summed in order; 0 where none occurs) plus, with ``extra``,
    the postings of its later terms within the section (:func:`flat`): each document's shares
    are added in the query's term order."""
    keep = base > 0
    docs, score = np.compress(keep, docs), np.compress(keep, base)
    if extra is not None and extra.docs.size:
        # the stable sort keeps each document's base before its later terms' shares, in order
        docs, score = _sum_by_doc(np.concatenate((docs, extra.docs)), np.concatenate((score, extra.weight)))
    return _top(docs, score, k, 0.0)


def share(idf: Any, tfs: Any, norm: Any) -> Any:
    """BM25's share ``idf · tf (k1 + 1) / (tf + norm)`` of a term for each (tf, norm) pair
    (``idf``: one, or one per pair)."""
    tf = tfs.astype(np.float64)
    return idf * (K1 + 1) * tf / (tf + norm)


def _finish(view: _View, cand: Any, score: Any, rest: list[int], floor: float, k: int) -> list[tuple[int, float]]:
    """The top k from the candidates' scores over the terms but ``rest`` (largest bound
    first), looked up for the candidates that can still reach the floor, raised as it goes."""
    bound = _sum_bounds(view.terms, rest)
    floor = _kth(score, k, floor)
    keep = score + bound >= floor * (1 - _SLACK)
    cand, score = cand[keep], score[keep]
    for i in rest:
        score = score + view.lookup(i, cand)
        bound -= view.terms[i].bound
        floor = _kth(score, k, floor)
        keep = score + bound >= floor * (1 - _SLACK)
        cand, score = cand[keep], score[keep]
    return _top(cand, score, k, floor)


def _dense(view: _View, cand: Any, score: Any, essential: list[int], rest: list[int],
           floor: float) -> tuple[Any, Any, list[int]]:
    """The section's documents that can still reach ``floor`` and their scores over every term
    but those left in ``rest``, accumulated in one array: the probe's scores, the essential
    terms, then the non-essential terms while adding one costs less than looking it up."""
    acc = np.zeros(view.norms.size)
    acc[cand] = score
    for i in essential:
        docs, weight = view.postings(i)
        acc[docs] += weight
    bound = _sum_bounds(view.terms, rest)
    while rest and np.count_nonzero(acc >= floor * (1 - _SLACK) - bound) * view.tuning.lookup > view.terms[rest[0]].docs.size:
        docs, weight = view.postings(rest[0])
        acc[docs] += weight
        bound -= view.terms[rest.pop(0)].bound
    least = floor * (1 - _SLACK) - bound
    cand = np.flatnonzero(acc >= least if least > 0 else acc != 0)
    return (*view.inside(cand, np.take(acc, cand)), rest)


def reads_its_nodes(share: float, tuning: Tuning) -> bool:
    """Whether a section holding ``share`` of the tenant reads only its nodes' postings
    (:mod:`memeval.engines.reference.split`) rather than filtering every posting of a term."""
    return share < tuning.narrow


def filters_postings(share: float, tuning: Tuning) -> bool:
    """Whether a section holding ``share`` (below 1) of the tenant filters each term's postings
    by node before scoring (rather than the candidates after)."""
    return share < tuning.filter_after


class _View:
    """One search's terms inside its section: each term's section postings and their BM25
    shares, computed once and shared by the probe and the essential pass."""

    def __init__(self, terms: list[Term], norms: Any, section: Any, share: float, tuning: Tuning) -> None:
        self.terms, self.norms, self.share, self.tuning = terms, norms, share, tuning
        self.node: Any = None if section is None else section[0]
        self.lut: Any = None if section is None else section[1]
        self.after = section is not None and not filters_postings(share, tuning)
        self._postings: dict[int, tuple[Any, Any]] = {}

    def postings(self, i: int) -> tuple[Any, Any]:
        """Term ``i``'s documents (all of them when the section filters afterwards) and shares."""
        found = self._postings.get(i)
        if found is None:
            term = self.terms[i]
            docs, tfs = term.docs, term.tfs
            if self.lut is not None and not self.after:
                inside = np.take(self.lut, term.nodes)
                docs, tfs = np.compress(inside, docs), np.compress(inside, tfs)
            found = self._postings[i] = (docs, share(term.idf, tfs, np.take(self.norms, docs)))
        return found

    def inside(self, cand: Any, score: Any) -> tuple[Any, Any]:
        """The candidates (and their scores) that are in the section."""
        if not self.after:
            return cand, score
        keep = np.take(self.lut, np.take(self.node, cand))
        return np.compress(keep, cand), np.compress(keep, score)

    def worth_dense(self, chosen: list[int]) -> bool:
        """Whether the postings of ``chosen`` inside the section are many enough to be summed
        in one array over every document rather than sorted."""
        size = sum(int(self.terms[i].docs.size) for i in chosen)
        share = 1.0 if self.lut is None or self.after else self.share
        return size * share * self.tuning.dense_share > int(self.norms.size)

    def shares(self, chosen: Any, least: float = 0.0, seed: tuple[Any, Any] | None = None) -> tuple[Any, Any]:
        """The section's documents holding a term of ``chosen`` (increasing) whose summed
        shares of those terms, plus the ``seed`` documents' scores, reach ``least`` (every one
        when it is not positive), and the sums."""
        parts = [self.postings(i) for i in chosen] + ([seed] if seed is not None else [])
        docs = np.concatenate([d for d, _ in parts])
        weight = np.concatenate([w for _, w in parts])
        if docs.size * self.tuning.dense_share <= self.norms.size:
            cand, score = _sum_by_doc(docs, weight)
            if least > 0:
                keep = score >= least
                cand, score = np.compress(keep, cand), np.compress(keep, score)
        else:
            dense = np.bincount(docs, weights=weight, minlength=self.norms.size)
            cand = np.flatnonzero(dense >= least if least > 0 else dense != 0)
            score = np.take(dense, cand)
        return self.inside(cand, score)

    def lookup(self, i: int, cand: Any) -> Any:
        """Term ``i``'s share for each candidate document (0 where it does not occur)."""
        term = self.terms[i]
        at = np.minimum(np.searchsorted(term.docs, cand), term.docs.size - 1)
        tfs = np.where(np.take(term.docs, at) == cand, np.take(term.tfs, at), 0)
        return share(term.idf, tfs, np.take(self.norms, cand))


def _probe_size(terms: list[Term], ranked: list[int], most: int) -> int:
    """How many of the ``ranked`` terms (rarest first) the probe reads: until their postings
    reach ``most``."""
    used, size = 0, 0
    while used < len(ranked) and size < most:
        size += terms[ranked[used]].docs.size
        used += 1
    return used


def _probe(view: _View, cand: Any, score: Any, others: list[int], k: int) -> float:
    """A lower bound on the k-th best score in the section: the k-th best full score among the
    ``tuning.probe_docs`` (at least k) documents of ``cand`` with the best partial ``score`` (0
    when there are fewer than k), completed with the ``others`` terms."""
    if cand.size < k:
        return 0.0
    size = max(view.tuning.probe_docs, k)
    if cand.size > size:
        best = np.sort(np.argpartition(score, cand.size - size)[cand.size - size :])
        cand, score = cand[best], score[best]
    for i in others:
        score = score + view.lookup(i, cand)
    return float(np.partition(score, cand.size - k)[cand.size - k])


def _sum_bounds(terms: list[Term], chosen: list[int]) -> float:
    """The sum of the bounds of the ``chosen`` terms."""
    return float(sum(terms[i].bound for i in chosen))


def _sum_by_doc(docs: Any, weight: Any) -> tuple[Any, Any]:
    """The distinct ``docs`` (increasing) and the sum of ``weight`` for each; a stable sort,
    since ``docs`` is a few increasing runs (one per term), which it merges."""
    if not docs.size:
        return docs, weight
    order = np.argsort(docs, kind="stable")
    docs, weight = np.take(docs, order), np.take(weight, order)
    first = np.flatnonzero(np.concatenate(([True], docs[1:] != docs[:-1])))
    return np.take(docs, first), np.add.reduceat(weight, first)


def _kth(score: Any, k: int, floor: float) -> float:
    """The larger of ``floor`` and the k-th best of ``score`` (partial scores never exceed the
    final ones, so either bounds the final k-th best from below)."""
    high = score[score > floor]
    if high.size < k:
        return floor
    return max(floor, float(np.partition(high, high.size - k)[high.size - k]))


def _top(cand: Any, score: Any, k: int, floor: float) -> list[tuple[int, float]]:
    """The ``k`` best ``(doc, score)`` pairs, best first, equal scores oldest first; ``floor``
    is at most the k-th best score."""
    if cand.size > k:
        keep = score >= floor * (1 - _SLACK)
        cand, score = cand[keep], score[keep]
    if cand.size > k:
        keep = score >= np.partition(score, cand.size - k)[cand.size - k]
        cand, score = cand[keep], score[keep]
    order = np.lexsort((cand, -score))[:k]
    return [(int(doc), float(value)) for doc, value in zip(cand[order], score[order], strict=True)]
