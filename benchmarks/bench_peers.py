"""The reference engine's lexical index beside its peers on one corpus, in one process.

Peers: an exhaustive textbook BM25 scorer written here (the ground truth for agreement) and
tantivy's Python bindings (``pip install tantivy``, one writer thread; skipped with a note when
it is not installed). All three index the same analyzed terms (tantivy gets them joined by
spaces with its whitespace tokenizer), so rankings differ only where the scoring does: tantivy
quantises document lengths to one byte; ours is exact (the same floating-point formula).

Figures per index: ingest (documents/s, building the index only), top-10 search p50 / p95 (ms,
one query over every agent node of one tenant) and top-10 agreement with the exhaustive scorer
(mean overlap share over the queries).
"""

from __future__ import annotations

import heapq
import importlib.util
import math
import statistics
import time
from collections.abc import Callable, Sequence

from memeval.engines import reference_kernel
from memeval.engines.base import MemoryItem
from memeval.engines.reference_index import LexicalIndex, analyze
from memeval.engines.reference_search import B, K1

TOP = 10


class Exhaustive:
    """Textbook Okapi BM25 over every posting of every query term (exact lengths and average)."""

    def __init__(self) -> None:
        self.post: dict[str, list[tuple[int, int]]] = {}
        self.dl: list[int] = []

    def add(self, doc: int, terms: Sequence[str]) -> None:
        counts: dict[str, int] = {}
        for term in terms:
            counts[term] = counts.get(term, 0) + 1
        for term, tf in counts.items():
            self.post.setdefault(term, []).append((doc, tf))
        self.dl.append(len(terms))

    def search(self, terms: Sequence[str], k: int) -> list[int]:
        n, avgdl = len(self.dl), sum(self.dl) / max(len(self.dl), 1)
        acc: dict[int, float] = {}
        for term in dict.fromkeys(terms):
            plist = self.post.get(term, [])
            idf = math.log(1 + (n - len(plist) + 0.5) / (len(plist) + 0.5))
            for doc, tf in plist:
                norm = tf + K1 * (1 - B + B * self.dl[doc] / avgdl)
                acc[doc] = acc.get(doc, 0.0) + idf * tf * (K1 + 1) / norm
        return [-neg for _, neg in heapq.nlargest(k, ((s, -d) for d, s in acc.items()))]


class Tantivy:
    """tantivy with the analyzed terms as whitespace-separated text (the same terms as ours)."""

    def __init__(self) -> None:
        import tantivy

        self._tv = tantivy
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("text", stored=False, tokenizer_name="whitespace", index_option="freq")
        builder.add_integer_field("doc", stored=True, indexed=False)
        self.index = tantivy.Index(builder.build())
        self._writer = self.index.writer(heap_size=500_000_000, num_threads=1)
        self._searcher = None

    def add(self, doc: int, terms: Sequence[str]) -> None:
        self._writer.add_document(self._tv.Document(text=" ".join(terms), doc=doc))

    def commit(self) -> None:
        self._writer.commit()
        self._writer.wait_merging_threads()
        self.index.reload()
        self._searcher = self.index.searcher()

    def search(self, terms: Sequence[str], k: int) -> list[int]:
        query = self.index.parse_query(" ".join(dict.fromkeys(terms)), ["text"])
        return [address for _, address in self._searcher.search(query, k).hits]  # type: ignore[union-attr]

    def docs(self, addresses: list) -> list[int]:
        return [self._searcher.doc(a)["doc"][0] for a in addresses]  # type: ignore[union-attr]


def compare(items: list[MemoryItem], queries: list[str]) -> list[dict]:
    """One row per index (ours default, ours exact, tantivy, exhaustive) over ``items``' turns."""
    turns = [i for i in items if i.kind == "turn"]
    codes = {name: c for c, name in enumerate(sorted({i.node for i in turns}))}
    analyzed = [analyze(i.text) for i in turns]
    asked = [analyze(q) for q in queries]
    truth_index = Exhaustive()
    rows = [_timed_ingest("exhaustive (ground truth)", len(turns), lambda: [truth_index.add(d, t) for d, t in enumerate(analyzed)])]
    truth = [truth_index.search(q, TOP) for q in asked]
    rows[0].update(_timed_search(lambda q: truth_index.search(q, TOP), asked, truth, lambda hits: hits))
    nodes = tuple(codes.values())
    ours = LexicalIndex()

    def ingest() -> None:
        # What the engine's write_many does: batches of 1,000, analyzed inside the index.
        for start in range(0, len(turns), 1000):
            batch = turns[start : start + 1000]
            ours.add_many(start, [codes[i.node] for i in batch], [i.text for i in batch])
        ours.search(["warm"], nodes, 1)

    compiled = reference_kernel.available() and len(turns) >= reference_kernel.MIN_DOCS
    if compiled:
        reference_kernel.prepare()  # numba's import and the kernel's build are not ingest
    row = _timed_ingest("ours (exact, compiled with numba)" if compiled else "ours (exact, MaxScore)", len(turns), ingest)
    row.update(_timed_search(lambda q: ours.search(q, nodes, TOP), asked, truth, lambda hits: [d for d, _ in hits]))
    rows.append(row)
    if importlib.util.find_spec("tantivy") is None:
        rows.append({"index": "tantivy (not installed: pip install tantivy)"})
        return rows
    peer = Tantivy()

    def build() -> None:
        for d, t in enumerate(analyzed):
            peer.add(d, t)
        peer.commit()

    version = str(getattr(peer._tv, "__version__", "tantivy")).split(",")[0]  # "tantivy v0.27.0, index_format v7"
    row = _timed_ingest(f"{version} (1 writer thread)", len(turns), build)
    row.update(_timed_search(lambda q: peer.search(q, TOP), asked, truth, peer.docs))
    rows.append(row)
    return rows


def _timed_ingest(label: str, count: int, build: Callable[[], object]) -> dict:
    start = time.perf_counter()
    build()
    return {"index": label, "ingest/s": count / (time.perf_counter() - start)}


def _timed_search(search: Callable, asked: list, truth: list[list[int]], ids: Callable) -> dict:
    times, agree = [], []
    for query, want in zip(asked, truth, strict=True):
        start = time.perf_counter()
        hits = search(query)
        times.append(time.perf_counter() - start)
        got = ids(hits)
        agree.append(len(set(got) & set(want)) / len(want) if want else 1.0)
    times.sort()
    return {"p50": 1000 * times[len(times) // 2], "p95": 1000 * times[min(len(times) - 1, int(0.95 * len(times)))],
            "agree": statistics.fmean(agree)}


def table(rows: list[dict], turns: int) -> str:
    """Markdown: each figure beside tantivy's and the exhaustive scorer's, as ratios (ours / peer)."""
    peers = {r["index"].split(" ")[0]: r for r in rows if "p50" in r}
    head = ("| index | turns | ingest/s | top-10 p50 | p95 | agreement@10 | ingest vs tantivy | p95 vs tantivy "
            "| p95 vs exhaustive |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    tv, ex = peers.get("tantivy"), peers.get("exhaustive")
    for r in rows:
        if "p50" not in r:
            lines.append(f"| {r['index']} | {turns:,} | – | – | – | – | – | – | – |")
            continue
        ratio = (lambda key, peer: f"{r[key] / peer[key]:.2f}x" if peer else "–")
        lines.append(f"| {r['index']} | {turns:,} | {r['ingest/s']:,.0f} | {r['p50']:.2f} ms | {r['p95']:.2f} ms "
                     f"| {r['agree']:.3f} | {ratio('ingest/s', tv)} | {ratio('p95', tv)} | {ratio('p95', ex)} |")
    return "\n".join(lines)
