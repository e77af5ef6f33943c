"""Lexical retrieval for the reference engine: an analyzer and an exact BM25 index (numpy).

Scoring is Okapi BM25 (k1 = 1.2, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5)), N, df and
the average document length over the tenant's live documents at the time of the search), the
same ranking as an exhaustive scorer: the top k is exact by construction, not approximated.

Postings live in immutable numpy segments (:mod:`memeval.engines.reference.postings`); writes
queue their term ids and become a segment at the next search, or every 4,096 documents, so a
write is visible to the next search (a tenant of few postings keeps them in one segment). A
query of few postings is gathered once into one run of BM25 shares that each section filters and
sums (:func:`memeval.engines.reference.search.flat_top_k`). Otherwise a search hands the query's
postings, each term's idf and bound, and the section's nodes to
:func:`memeval.engines.reference.search.top_k`, which prunes with MaxScore and returns what
scoring every posting would.

A tenant of ``Tuning.compiled_docs`` documents (:mod:`.tuning`) or more, with numba
installed, scores in compiled code instead: the first query of a pack is its question, whose
scores over every document go into one array when a search first needs them, kept until the next
question or write; every section reads its top k from it (a small section its own documents'
scores, a large one in one pass over the array), and a query that starts with the question's
terms (a feedback query) adds only its later terms' shares to it. A tenant's searches cost one
pass over the question's postings, not one per section; a lone search of a small section costs
that pass too.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from memeval.engines.reference.tuning import DEFAULT, Tuning
from memeval.engines.reference import kernel
from memeval.text.analyze import CACHE_MAX, flatten, word_parts, word_term
from memeval.engines.reference import postings
from memeval.engines.reference.postings import Segment
from memeval.engines.reference.split import NodeDocs, NodeSplit, split
from memeval.engines.reference.split import postings as node_postings
from memeval.engines.reference.search import (
    B,
    K1,
    Flat,
    Term,
    filters_postings,
    flat,
    flat_top_k,
    reads_its_nodes,
    scores_every_posting,
    seeded_top_k,
    share,
    top_k,
)

# Plans a tenant keeps (a pack's question, and a feedback query or two).
PLANS = 4
_PEAK_SLACK = 0.05
class _Asked(NamedTuple):
    """A pack's question in a compiled tenant: the index's state it was asked in (documents,
    live documents, their total length), its terms' ids, and every document's BM25 score for
    them (None until a search needs them)."""

    key: tuple[int, int, int]
    tids: tuple[int, ...]
    scores: Any


class LexicalIndex:
    """BM25 over one tenant's documents, each tagged with a node code, searched within nodes.

    Documents are dense integer ids handed out by the caller in increasing order (0, 1, 2, ...);
    node codes are small non-negative integers. Not thread-safe: the engine serialises calls.
    """

    def __init__(self, tuning: Tuning = DEFAULT) -> None:
        self.tuning = tuning
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
        self._per_node = np.zeros(0, dtype=np.int64)
        self._plans: dict[tuple[str, ...], tuple[list[Term], Flat | None]] = {}
        self._plans_of = (0, 0)
        self._norms: tuple[tuple[int, ...], Any] = ((), None)
        self._peaks: dict[int, tuple[float, int, float]] = {}
        self._scratch = np.zeros(0)
        self._splits: dict[int, tuple[Segment, NodeSplit]] = {}
        self._question: _Asked | None = None
        self._asked_scores = np.zeros(0)
        self._node_docs = NodeDocs()
        self._df = np.zeros(0, dtype=np.int64)

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
        if len(lengths) >= self.tuning.flush:
            self._flush()

    def remove(self, docs: Collection[int]) -> None:
        """Drop documents; unknown or removed ones are ignored."""
        self._flush()
        gone = np.array([doc for doc in docs if 0 <= doc < self._count], dtype=np.int64)
        gone = gone[self._live[gone]]
        if not gone.size:
            return
        self._live[gone] = False
        self._per_node -= np.bincount(self._node[gone], minlength=self._width)
        self._alive -= int(gone.size)
        self._total -= int(self._dl[gone].sum())
        terms = len(self._tid)
        self._segments = [postings.purge(segment, self._live, terms) for segment in self._segments]
        self._df = postings.frequencies(self._segments, terms)

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
        inside = int(self._per_node[lut].sum())
        if not inside:
            return []
        part = inside < self._alive and filters_postings(inside / self._alive, self.tuning)
        narrow = inside < self._alive and reads_its_nodes(inside / self._alive, self.tuning)
        compiled = kernel.compiles(self._alive, self.tuning)
        terms, small = self._plan(query, part and not narrow and not compiled, whole=not narrow and not compiled)
        if compiled and terms:
            self._note(terms)
        if small is not None:
            return flat_top_k(small, lut if inside < self._alive else None, k)
        if not terms:
            return []
        codes = sorted(n for n in nodes if 0 <= n < self._width) if narrow else None
        if compiled:
            return self._compiled(terms, codes, lut, k)
        if codes is not None:
            return self._narrow(terms, codes, k)
        section = None if inside == self._alive else (self._node, lut)
        return top_k(terms, self._norms_now(), section, inside / self._alive, k, self.tuning)

    def _compiled(self, terms: list[Term], narrow: list[int] | None, lut: Any, k: int) -> list[tuple[int, float]]:
        """The search in compiled code (:mod:`memeval.engines.reference.kernel`), from the scores
        of every document for the pack's question (:meth:`_asked`) and the BM25 shares of the
        query's later terms (a feedback query starts with the question's); ``narrow``: the
        section's nodes when it is a small share of the tenant (its documents' scores are read
        out), else None (the whole array is scanned)."""
        asked = self._question
        assert asked is not None  # search() noted the question
        extra = terms[len(asked.tids) :]
        node = self._node[: self._count]
        if narrow is None and extra and asked.scores is None:
            # No search has needed the question's scores yet (it was few postings): score this
            # query whole, as the question's scores plus its later terms would.
            scratch = self._scratch_for()
            kernel.accumulate(*self._packed(terms), self._norms_now(), scratch)
            return kernel.best(scratch, node, lut, k, clear=True)
        scores = self._asked(asked, terms)
        if narrow is not None:
            docs = self._node_docs.of(self._node, self._count, narrow)
            later = None
            if extra:
                runs = node_postings(self._node_splits(), narrow, [term.tid for term in extra])
                later = flat([term._replace(docs=held, tfs=tfs) for term, (held, tfs) in zip(extra, runs, strict=True)],
                             self._norms_now(), self._node)
            return seeded_top_k(docs, np.take(scores, docs), later, k)
        if not extra:
            return kernel.best(scores, node, lut, k, clear=False)
        scratch = self._scratch_for()
        scratch[:] = scores
        kernel.accumulate(*self._packed(extra), self._norms_now(), scratch)
        return kernel.best(scratch, node, lut, k, clear=True)

    def _scratch_for(self) -> Any:
        """A float64 array of zeros, one per document (the kernel leaves it zeroed again)."""
        if self._scratch.size < self._count:
            self._scratch = np.zeros(max(self._count, 2 * self._scratch.size))
        return self._scratch[: self._count]

    def _note(self, terms: list[Term]) -> None:
        """Take ``terms`` as the pack's question unless they start with its terms (a feedback
        query does: the question and the best match's terms), whichever way the search runs (a
        question of few postings is scored in one flat run, its feedback queries may not be)."""
        key = (self._count, self._alive, self._total)
        tids = tuple(term.tid for term in terms)
        asked = self._question
        if asked is None or asked.key != key or tids[: len(asked.tids)] != asked.tids:
            self._question = _Asked(key, tids, None)

    def _asked(self, asked: _Asked, terms: list[Term]) -> Any:
        """Every document's score for the pack's question ``asked``, which ``terms`` start with
        (:meth:`_note`), scored on the first search that needs them."""
        if asked.scores is None:
            if self._asked_scores.size != self._count:
                self._asked_scores = np.zeros(self._count)
            scores = self._asked_scores
            scores.fill(0.0)
            kernel.accumulate(*self._packed(terms[: len(asked.tids)]), self._norms_now(), scores)
            asked = self._question = asked._replace(scores=scores)
        return asked.scores

    def _packed(self, terms: list[Term]) -> tuple[Any, Any, Any, Any]:
        """The postings of ``terms`` over every segment, one term after another, as
        :func:`kernel.accumulate` takes them: starts, documents, term frequencies and idfs."""
        parts = [segment.postings(term.tid) for term in terms for segment in self._segments]
        starts = np.zeros(len(terms) * len(self._segments) + 1, dtype=np.int64)
        np.cumsum([d.size for d, _ in parts], out=starts[1:])
        starts = starts[:: len(self._segments)]  # each term's first posting, and the end
        docs = np.concatenate([d for d, _ in parts])
        tfs = np.concatenate([t for _, t in parts])
        return starts, docs, tfs, np.array([term.idf for term in terms])

    def _narrow(self, terms: list[Term], nodes: list[int], k: int) -> list[tuple[int, float]]:
        """The search within ``nodes``, a small share of the tenant, over their own postings of
        ``terms`` (:mod:`memeval.engines.reference.split`): scored whole when few, else pruned."""
        found = node_postings(self._node_splits(), nodes, [term.tid for term in terms])
        inside = [term._replace(docs=docs, tfs=tfs) for term, (docs, tfs) in zip(terms, found, strict=True) if docs.size]
        if not inside:
            return []
        if scores_every_posting(sum(term.docs.size for term in inside), self.tuning):
            return flat_top_k(flat(inside, self._norms_now(), self._node), None, k)
        return top_k(inside, self._norms_now(), None, 1.0, k, self.tuning)

    def _node_splits(self) -> list[NodeSplit]:
        """Each segment's postings by node, built for the segments that appeared since the last
        call (a segment is immutable: one split serves it until a merge or a removal replaces it)."""
        kept: dict[int, tuple[Segment, NodeSplit]] = {}
        for segment in self._segments:
            found = self._splits.get(id(segment))
            if found is None or found[0] is not segment:
                found = (segment, split(segment, self._node, self._width))
            kept[id(segment)] = found
        self._splits = kept
        return [part for _, part in kept.values()]

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
    def load(cls, folder: Path, tuning: Tuning = DEFAULT) -> LexicalIndex:
        """The index :meth:`save` wrote under ``folder``; postings stay memory-mapped until merged.

        Raises:
            OSError: a file is missing or unreadable.
            ValueError: a file is not what :meth:`save` writes.
        """
        meta = json.loads((folder / "lexical.json").read_text(encoding="utf-8"))
        index = cls(tuning)
        index._tid = {term: tid for tid, term in enumerate(meta["terms"])}
        index._segments = [postings.load(folder, meta["size"])] if meta["count"] else []
        index._node, index._dl, index._live = (np.load(folder / f"{name}.npy") for name in ("node", "dl", "live"))
        index._count = int(meta["count"])
        index._alive = int(index._live.sum())
        index._total = int(index._dl[index._live].sum())
        index._width = int(index._node.max()) + 1 if index._count else 0
        index._per_node = np.bincount(index._node[index._live], minlength=index._width)
        index._df = postings.frequencies(index._segments, len(index._tid))
        return index

    def _ids_of(self, words: list[str]) -> list[int]:
        """Term ids of ``words`` (-1 for a word that is not indexed), caching single-term words."""
        if len(self._words) > CACHE_MAX:
            self._words.clear()
        ids = []
        for word in words:
            tid = self._words.get(word)
            if tid is not None:
                ids.append(tid)
                continue
            found = [self._tid.setdefault(term, len(self._tid)) for part in word_parts(word) if (term := word_term(part))]
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
        per_node = np.bincount(self._queued_nodes, minlength=self._width)
        per_node[: self._per_node.size] += self._per_node
        self._per_node = per_node
        self._count, self._alive, self._total = end, self._alive + count, self._total + int(dl.sum())
        self._queued, self._lengths, self._queued_nodes = [], [], []
        terms = len(self._tid)
        segment = postings.build(tids, docs, terms, count)
        self._df = np.concatenate((self._df, np.zeros(terms - self._df.size, dtype=np.int64)))
        self._df += postings.frequencies([segment], terms)
        self._segments = postings.compact([*self._segments, segment], terms, self.tuning.one_segment)

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

    def _plan(self, query: Sequence[str], nodes: bool, whole: bool = True) -> tuple[list[Term], Flat | None]:
        """The query's terms present in the tenant, with their idf, upper bound and postings
        (and each posting's node code when ``nodes`` is set, gathered once for the sections of
        one query), and, when they hold few postings, all of them in one :class:`Flat` (their
        bounds are then not needed: every posting is scored). Without ``whole`` the terms may
        come without their postings (``docs`` None: a section that reads its own nodes' needs
        none). The :data:`PLANS` most recently used plans are kept until the next write: a
        pre-turn asks its question of each section, and each section's feedback query in between."""
        if self._plans_of != (self._count, self._alive):
            self._plans.clear()
            self._plans_of = (self._count, self._alive)
        key = tuple(query)
        found = self._plans.pop(key, None)
        if found is None or (whole and found[0] and found[0][0].docs is None):
            found = self._gather(query, whole)
            if len(self._plans) >= PLANS:
                del self._plans[next(iter(self._plans))]
        plan, small = found
        if nodes and small is None and plan and plan[0].nodes is None:
            found = ([term._replace(nodes=np.take(self._node, term.docs)) for term in plan], None)
        self._plans[key] = found  # the most recently used last
        return found

    def _gather(self, query: Sequence[str], whole: bool) -> tuple[list[Term], Flat | None]:
        """:meth:`_plan`'s terms and flat postings, read from the segments (each term's postings
        joined across them only when ``whole`` or few; read only for a bound otherwise)."""
        found = []
        for term in dict.fromkeys(query):
            tid = self._tid.get(term)
            if tid is not None and tid < self._df.size and self._df[tid]:
                found.append((tid, int(self._df[tid])))
        compiled = kernel.compiles(self._alive, self.tuning)
        small = scores_every_posting(sum(df for _, df in found), self.tuning, self._alive if compiled else 0)
        plan = []
        for tid, df in found:
            idf = math.log(1 + (self._alive - df + 0.5) / (df + 0.5))
            docs = tfs = None
            bound = math.inf  # a search that scores every posting needs no bound
            if whole or small or not compiled:
                parts = [segment.postings(tid) for segment in self._segments]
                if whole or small:
                    docs = np.concatenate([d for d, _ in parts]) if len(parts) > 1 else parts[0][0]
                    tfs = np.concatenate([t for _, t in parts]) if len(parts) > 1 else parts[0][1]
                if not small and not compiled:
                    bound = idf * self._peak(tid, parts)
            plan.append(Term(idf, bound, docs, tfs, tid=tid))
        return plan, flat(plan, self._norms_now(), self._node) if small and plan else None

    def _peak(self, tid: int, parts: Sequence[tuple[Any, Any]]) -> float:
        """An upper bound on term ``tid``'s tf factor ``tf (k1 + 1) / (tf + norm)`` in any of its
        documents (its postings in ``parts``, one per segment): the largest factor over its
        postings at an average length 5 % above the current one (the factor grows with the
        average), kept until the average outgrows it and extended to the documents written
        since. Removals only lower the true largest factor."""
        avgdl = self._total / self._alive
        limit, covered, peak = self._peaks.get(tid, (0.0, 0, 0.0))
        if avgdl > limit:
            limit, covered, peak = avgdl * (1 + _PEAK_SLACK), 0, 0.0
        if covered < self._count:
            for docs, tfs in parts:
                if not docs.size or docs[-1] < covered:
                    continue
                start = int(np.searchsorted(docs, covered))
                norm = K1 * (1 - B + B * self._dl[docs[start:]] / limit)
                peak = max(peak, float(share(1.0, tfs[start:], norm).max()))
            self._peaks[tid] = (limit, self._count, peak)
        return peak

    def _norms_now(self) -> Any:
        """BM25's length normalisation ``k1 (1 - b + b dl / avgdl)`` of every document, rebuilt
        after writes (one pass over the tenant, shared by searches)."""
        key = (self._count, self._alive, self._total)
        if self._norms[0] != key:
            dl = self._dl[: self._count].astype(np.float64)
            self._norms = (key, K1 * (1 - B) + (K1 * B / (self._total / self._alive)) * dl)
        return self._norms[1]


