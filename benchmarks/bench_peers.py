"""The reference engine's lexical index beside its peers on one corpus, in one process.

Peers: an exhaustive textbook BM25 scorer written here (the ground truth for agreement) and
tantivy's Python bindings (``pip install tantivy``, one writer thread; skipped with a note when
it is not installed). All three index the same analyzed terms (tantivy gets them joined by
spaces with its whitespace tokenizer), so rankings differ only where the scoring does: tantivy
quantises document lengths to one byte; ours is exact (the same floating-point formula).

Figures per index: ingest (documents/s, building the index only), top-10 search p50 / p95 (ms,
one query over every agent node of one tenant) and top-10 agreement with the exhaustive scorer
(mean overlap share over the queries).

Then the lexical searches a pre-turn makes in the turns, ours beside tantivy's (:func:`pack`):
for each question, its agent's own node and every agent node (the history and team sections),
each searched for the question and then for its feedback query (the question and six terms of
the first search's best hit, :func:`memeval.engines.reference.rank.feedback_terms`; the engine
takes its fused ranking's best, for a query of the same shape), at the engine's depth: four
searches a question, timed together; tantivy searches within a node through a filter that adds
nothing to the score.
"""

from __future__ import annotations

import heapq
import importlib.util
import math
import statistics
import time
from collections.abc import Callable, Sequence

from memeval.engines.reference import kernel as reference_kernel
from memeval.engines.base import MemoryItem
from memeval.engines.reference.engine import MIN_DEPTH
from memeval.engines.reference.index import LexicalIndex
from memeval.text.analyze import analyze
from memeval.engines.reference.rank import feedback_terms
from memeval.engines.reference.search import B, K1
from memeval.engines.reference.tuning import DEFAULT

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
    """tantivy with the analyzed terms as whitespace-separated text (the same terms as ours) and
    each document's node as one untokenized term."""

    def __init__(self) -> None:
        import tantivy

        self._tv = tantivy
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("text", stored=False, tokenizer_name="whitespace", index_option="freq")
        builder.add_text_field("node", stored=False, tokenizer_name="raw", index_option="basic")
        builder.add_integer_field("doc", stored=True, indexed=False)
        self.index = tantivy.Index(builder.build())
        self._writer = self.index.writer(heap_size=500_000_000, num_threads=1)
        self._searcher = None

    def add(self, doc: int, terms: Sequence[str], node: str) -> None:
        self._writer.add_document(self._tv.Document(text=" ".join(terms), node=node, doc=doc))

    def commit(self) -> None:
        self._writer.commit()
        self._writer.wait_merging_threads()
        self.index.reload()
        self._searcher = self.index.searcher()

    def search(self, terms: Sequence[str], k: int, node: str | None = None) -> list[int]:
        """The ``k`` best documents' addresses, within ``node`` when given (a filter scored 0)."""
        tv = self._tv
        query = self.index.parse_query(" ".join(dict.fromkeys(terms)), ["text"])
        if node is not None:
            inside = tv.Query.const_score_query(tv.Query.term_query(self.index.schema, "node", node), 0.0)
            query = tv.Query.boolean_query([(tv.Occur.Must, query), (tv.Occur.Must, inside)])
        return [address for _, address in self._searcher.search(query, k).hits]  # type: ignore[union-attr]

    def docs(self, addresses: list) -> list[int]:
        return [self._searcher.doc(a)["doc"][0] for a in addresses]  # type: ignore[union-attr]


def compare(items: list[MemoryItem], asks: list[tuple[str, str]]) -> tuple[list[dict], list[dict]]:
    """One row per index (exhaustive, ours, tantivy) over ``items``' turns for the questions of
    ``asks`` (``(agent node, question)`` pairs), and the rows of :func:`pack` (none without
    tantivy)."""
    queries = [question for _, question in asks]
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

    compiled = reference_kernel.available() and len(turns) >= DEFAULT.compiled_docs
    if compiled:
        reference_kernel.prepare()  # numba's import and the kernel's build are not ingest
    row = _timed_ingest("ours (exact, compiled with numba)" if compiled else "ours (exact, MaxScore)", len(turns), ingest)
    row.update(_timed_search(lambda q: ours.search(q, nodes, TOP), asked, truth, lambda hits: [d for d, _ in hits]))
    rows.append(row)
    if importlib.util.find_spec("tantivy") is None:
        rows.append({"index": "tantivy (not installed: pip install tantivy)"})
        return rows, []
    peer = Tantivy()

    def build() -> None:
        for d, (t, item) in enumerate(zip(analyzed, turns, strict=True)):
            peer.add(d, t, item.node)
        peer.commit()

    version = str(getattr(peer._tv, "__version__", "tantivy")).split(",")[0]  # "tantivy v0.27.0, index_format v7"
    row = _timed_ingest(f"{version} (1 writer thread)", len(turns), build)
    row.update(_timed_search(lambda q: peer.search(q, TOP), asked, truth, peer.docs))
    rows.append(row)
    return rows, pack(ours, peer, turns, codes, asks)


def pack(ours: LexicalIndex, peer: Tantivy, turns: list[MemoryItem], codes: dict[str, int],
         asks: list[tuple[str, str]]) -> list[dict]:
    """Ours and tantivy on the four lexical searches a pre-turn makes in ``turns`` for each
    question of ``asks`` (see the module docstring): p50 / p95 of their sum (ms), and how much
    of our top 10 tantivy's holds (mean share over the searches)."""
    every = tuple(codes.values())
    plans = []
    for node, question in asks:  # the feedback queries, found before anything is timed
        terms, searches = analyze(question), []
        for codes_in, name in (((codes[node],), node), (every, None)):
            hits = ours.search(terms, codes_in, MIN_DEPTH)
            feedback = feedback_terms(terms, turns[hits[0][0]].text) if hits else terms
            searches += [(terms, codes_in, name), (feedback, codes_in, name)]
        plans.append(searches)
    # Each question's first search scores it afresh: the one before it asked other terms.
    mine, theirs, agree = [], [], []
    for searches in plans:
        start = time.perf_counter()
        got = [ours.search(terms, codes_in, MIN_DEPTH) for terms, codes_in, _ in searches]
        mine.append(time.perf_counter() - start)
        start = time.perf_counter()
        found = [peer.search(terms, MIN_DEPTH, name) for terms, _, name in searches]
        theirs.append(time.perf_counter() - start)
        for hits, addresses in zip(got, found, strict=True):
            want = {doc for doc, _ in hits[:TOP]}
            agree.append(len(want & set(peer.docs(addresses[:TOP]))) / len(want) if want else 1.0)
    share = statistics.fmean(agree)
    return [{"index": "ours", **_percentiles(mine), "agree": 1.0},
            {"index": "tantivy", **_percentiles(theirs), "agree": share}]


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
    return {**_percentiles(times), "agree": statistics.fmean(agree)}


def _percentiles(seconds: list[float]) -> dict:
    """p50 and p95 of ``seconds``, in ms."""
    times = sorted(seconds)
    return {"p50": 1000 * times[len(times) // 2], "p95": 1000 * times[min(len(times) - 1, int(0.95 * len(times)))]}


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


def pack_table(rows: list[dict], turns: int, questions: int) -> str:
    """Markdown for :func:`pack`'s rows, with our p50 and p95 as ratios to tantivy's."""
    head = "| index | turns | questions | 4 searches p50 | p95 | top 10 as ours | p50 vs tantivy | p95 vs tantivy |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    tv = rows[-1]
    for r in rows:
        lines.append(f"| {r['index']} | {turns:,} | {questions} | {r['p50']:.2f} ms | {r['p95']:.2f} ms "
                     f"| {r['agree']:.3f} | {r['p50'] / tv['p50']:.2f}x | {r['p95'] / tv['p95']:.2f}x |")
    return "\n".join(lines)
