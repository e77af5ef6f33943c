"""The embedded reference engine against the Engine contract, plus its ranking promises."""

from __future__ import annotations

import importlib.util
import math
import random

import pytest

from memeval.engines.base import (PROTOCOLS, Belief, BuildsBeliefs, Capability, Engine, Erases, Inspects, MemoryItem,
                                  RecallRequest, capabilities_of)
from memeval.engines.conformance import CONTRACTS, run_checks
from memeval.engines.reference.engine import create
from memeval.engines.reference.tuning import Tuning
from memeval.text.analyze import analyze
from memeval.errors import EngineError, UsageError

T = "tenant-1"
DISTRACTORS = [
    "The team met on Monday to plan the sprint and review open tickets.",
    "Lunch today is pasta with a green salad and lemon water.",
    "The build pipeline failed twice because of a flaky network test.",
    "Please rotate the API keys before the end of the quarter.",
    "Our office plants need watering every Thursday afternoon.",
    "The quarterly report shows revenue growth in every region.",
    "Bob prefers tea over coffee and drinks it without sugar.",
    "The database migration is scheduled for Saturday night.",
]


def bm25_only(tuning: Tuning = Tuning()) -> Engine:
    return create({"embedder": "none"}, tuning)


def turn(text: str, node: str = "agent:a", at: str | None = None, tenant: str = T, **kw) -> MemoryItem:
    return MemoryItem(tenant, node, "turn", text, at=at, **kw)


def minute(i: int) -> str:
    return f"2026-09-01T{9 + i // 60:02d}:{i % 60:02d}:00Z"


def recall(engine: Engine, query: str | None, nodes=("agent:",), limit=10, prefer_recent=True, tenant=T) -> list[str]:
    return [h.item.text for h in engine.recall(RecallRequest(tenant, tuple(nodes), query, limit, prefer_recent))]


def test_satisfies_the_engine_protocol_and_declares_what_it_implements():
    engine = bm25_only()
    info = engine.info()
    assert isinstance(engine, Engine)
    assert info.name == "reference"
    assert info.capabilities == capabilities_of(engine)
    assert isinstance(engine, Erases) and isinstance(engine, BuildsBeliefs) and isinstance(engine, Inspects)
    assert info.to_json()["capabilities"] == ["beliefs", "erase", "forget", "inspect"]
    assert info.settings["ranking"] == "bm25+recency"
    assert info.settings["embedder"] == "none"


@pytest.mark.parametrize("capability", [Capability.ANSWER, Capability.USAGE, Capability.BACKLOG, Capability.CONFLICTS])
def test_what_it_cannot_do_it_neither_declares_nor_stubs(capability):
    engine = bm25_only()
    assert capability not in engine.info().capabilities
    assert not isinstance(engine, PROTOCOLS[capability])


def test_the_conformance_kit_passes():
    results = run_checks(bm25_only())
    assert [r.contract for r in results if not r.ok] == []
    assert {r.contract for r in results} == {c.name for c in CONTRACTS}


def test_settings_are_validated():
    with pytest.raises(UsageError, match="did you mean 'embedder'"):
        create({"embeder": "none"})
    with pytest.raises(UsageError, match="auto, none, static"):
        create({"embedder": "minilm"})
    with pytest.raises(UsageError, match="unknown setting 'lexical_budget'"):
        create({"lexical_budget": 0})


def test_static_embedder_without_the_extra_is_a_usage_error():
    if importlib.util.find_spec("static_model") and importlib.util.find_spec("numpy"):
        pytest.skip("the embeddings extra is installed here")
    with pytest.raises(UsageError, match=r"memeval-harness\[embeddings\]"):
        create({"embedder": "static"})
    assert create({"embedder": "auto"}).info().settings["ranking"] == "bm25+recency"


def test_a_second_write_of_the_same_item_is_a_replay():
    engine = bm25_only()
    item = turn("the deploy target is staging", at=minute(0))
    first, second = engine.write(item), engine.write(item)
    assert (first.id, first.replayed, second.id, second.replayed) == (item.id, False, item.id, True)
    assert [i.id for i in engine.page(T).items] == [item.id]
    assert len(engine.recall(RecallRequest(T, ("agent:",), "deploy target", 10))) == 1


def test_tenants_are_separate_roots():
    engine = bm25_only()
    engine.write(turn("alice is allergic to peanuts", tenant="t1"))
    engine.write(turn("bob is allergic to shellfish", tenant="t2"))
    assert recall(engine, "allergic", tenant="t1") == ["alice is allergic to peanuts"]
    assert recall(engine, None, tenant="t2") == ["bob is allergic to shellfish"]
    engine.erase("t1")
    assert recall(engine, "allergic", tenant="t1") == []
    assert [i.text for i in engine.page("t2").items] == ["bob is allergic to shellfish"]
    assert recall(engine, "allergic", tenant="nobody") == []


def test_nodes_select_by_exact_name_or_colon_prefix():
    engine = bm25_only()
    for node in ("agent:a", "agent:b", "agentx", "source:wiki", "source:wikipedia", "learnings"):
        engine.write(MemoryItem(T, node, "turn", f"release notes from {node}"))

    def found(nodes: tuple[str, ...]) -> list[str]:
        return sorted(h.item.node for h in engine.recall(RecallRequest(T, nodes, "release notes", 10)))

    assert found(("agent:",)) == ["agent:a", "agent:b"]
    assert found(("agent:b",)) == ["agent:b"]
    assert found(("source:wiki",)) == ["source:wiki"]
    assert found(("source:", "learnings")) == ["learnings", "source:wiki", "source:wikipedia"]
    assert found(("agent",)) == []
    assert found(()) == []


def test_a_small_node_is_not_starved_by_a_large_one():
    engine = bm25_only()
    for i in range(300):
        engine.write(turn(f"deploy log line {i}: deploy finished", node="agent:busy"))
    engine.write(turn("deploy checklist for the quiet agent", node="agent:quiet"))
    assert recall(engine, "deploy", nodes=("agent:quiet",), limit=1) == ["deploy checklist for the quiet agent"]


def test_list_pages_newest_first_each_item_once():
    engine = bm25_only()
    order = [7, 2, 9, 0, 4, 1, 8, 3, 6, 5]
    for i in order:
        engine.write(turn(f"dated {i}", at=minute(i)))
    engine.write(turn("undated first"))
    engine.write(turn("undated second"))
    seen, cursor, pages = [], None, 0
    while True:
        page = engine.page(T, cursor, limit=4)
        seen += [i.text for i in page.items]
        pages += 1
        if page.cursor is None:
            break
        cursor = page.cursor
    assert pages == 3
    assert seen == [f"dated {i}" for i in range(9, -1, -1)] + ["undated second", "undated first"]


def test_list_cursor_survives_a_write_between_pages():
    engine = bm25_only()
    for i in range(6):
        engine.write(turn(f"turn {i}", at=minute(i)))
    first = engine.page(T, limit=3)
    engine.write(turn("late turn", at=minute(59)))
    second = engine.page(T, first.cursor, limit=3)
    assert [i.text for i in first.items + second.items] == [f"turn {i}" for i in range(5, -1, -1)]
    assert second.cursor is None
    assert engine.page(T, limit=1).items[0].text == "late turn"


def test_list_and_writes_reject_bad_input():
    engine = bm25_only()
    with pytest.raises(EngineError, match="cursor"):
        engine.page(T, "not-a-cursor")
    with pytest.raises(EngineError, match="limit"):
        engine.page(T, limit=0)
    with pytest.raises(EngineError, match="timestamp"):
        engine.write(turn("when?", at="yesterday"))


def test_a_batch_interleaving_tenants_stores_what_precedes_a_bad_timestamp_and_finds_it():
    engine = bm25_only()
    batch = [turn(f"walrus note {i}", tenant=f"t{i % 2}", at=minute(i)) for i in range(6)]
    batch.insert(4, turn("walrus when?", tenant="t1", at="yesterday"))
    with pytest.raises(EngineError, match="timestamp"):
        engine.write_many(batch)
    for tenant, stored in (("t0", ["walrus note 0", "walrus note 2"]), ("t1", ["walrus note 1", "walrus note 3"])):
        hits = engine.recall(RecallRequest(tenant, ("agent:",), "walrus note", 10))
        assert sorted(hit.item.text for hit in hits) == stored
    # The items after the bad one were not stored: writing them now is not a replay.
    assert not any(receipt.replayed for receipt in engine.write_many(batch[5:]))


def test_query_none_lists_the_nodes_newest_first():
    engine = bm25_only()
    for i in range(5):
        engine.write(turn(f"a{i}", node="agent:a", at=minute(2 * i)))
        engine.write(turn(f"b{i}", node="agent:b", at=minute(2 * i + 1)))
    assert recall(engine, None, limit=4) == ["b4", "a4", "b3", "a3"]
    assert recall(engine, None, nodes=("agent:a",), limit=2) == ["a4", "a3"]


def test_forget_removes_items_from_recall_listing_and_beliefs():
    engine = bm25_only()
    keep = turn("the staging server lives in Frankfurt.", thread="ops", turn=0, at=minute(0))
    drop = turn("the staging password is hunter2.", thread="secrets", turn=0, at=minute(1))
    engine.write(keep)
    engine.write(drop)
    assert engine.build_beliefs(T).built == 2
    assert engine.forget(T, (drop.id, drop.id, "unknown")) == 1
    assert engine.forget(T, (drop.id,)) == 0
    assert recall(engine, "staging password") == ["the staging server lives in Frankfurt."]
    assert [i.id for i in engine.page(T).items] == [keep.id]
    assert [b.subject for b in engine.inspect(T).beliefs] == ["ops"]


def test_erase_removes_everything_in_the_tenant():
    engine = bm25_only()
    engine.write(turn("alpha", thread="x"))
    engine.build_beliefs(T)
    engine.erase(T)
    assert engine.page(T).items == ()
    assert engine.inspect(T).beliefs == ()
    assert recall(engine, "alpha") == []


def test_bm25_ranks_the_relevant_item_first_among_distractors():
    engine = bm25_only()
    for text in DISTRACTORS[:4]:
        engine.write(turn(text))
    engine.write(turn("Alice mentioned she is allergic to peanuts, so no satay."))
    for text in DISTRACTORS[4:]:
        engine.write(turn(text))
    hits = recall(engine, "What is Alice allergic to?")
    assert hits[0] == "Alice mentioned she is allergic to peanuts, so no satay."
    assert recall(engine, "Which tickets did the team plan on Monday?")[0] == DISTRACTORS[0]


def test_a_rare_term_outweighs_a_common_one():
    engine = bm25_only()
    for i in range(20):
        engine.write(turn(f"meeting notes number {i} about the meeting"))
    engine.write(turn("kubernetes upgrade notes"))
    assert recall(engine, "meeting about kubernetes", limit=1) == ["kubernetes upgrade notes"]


def test_stemming_lets_inflections_meet():
    engine = bm25_only()
    engine.write(turn("We moved the servers to the new datacenter."))
    assert recall(engine, "moving server") == ["We moved the servers to the new datacenter."]
    assert analyze("Moving, moved, moves!") == ["mov", "mov", "mov"]
    assert analyze("Launch on 4 November, plan B") == ["launch", "4", "november", "plan"]


def test_recency_breaks_a_near_tie_in_favour_of_the_newer_value():
    engine = bm25_only()
    engine.write(turn("My favourite editor is vim.", at=minute(0)))
    engine.write(turn("Actually my favourite editor is now emacs.", at=minute(30)))
    query = "what is my favourite editor?"
    assert recall(engine, query, prefer_recent=True) == [
        "Actually my favourite editor is now emacs.",
        "My favourite editor is vim.",
    ]
    assert recall(engine, query, prefer_recent=False)[0] == "My favourite editor is vim."


def test_unrelated_newer_items_do_not_dilute_recency():
    engine = bm25_only()
    engine.write(turn("The Heron budget is 40,000 EUR for now.", at=minute(0)))
    engine.write(turn("The agency gave us a discount, so the Heron budget is 47,500 EUR.", at=minute(20)))
    for i in range(6):
        engine.write(turn(f"Heron stand-up note {i}: nothing new on the Heron widgets.", at=minute(30 + i)))
    assert recall(engine, "What is the Heron budget?", nodes=("agent:a",), limit=2) == [
        "The agency gave us a discount, so the Heron budget is 47,500 EUR.",
        "The Heron budget is 40,000 EUR for now.",
    ]


def test_recency_does_not_drown_relevance():
    engine = bm25_only()
    engine.write(turn("The invoice for the Zurich office is overdue.", at=minute(0)))
    engine.write(turn("Someone asked about an office chair.", at=minute(50)))
    assert recall(engine, "Zurich office invoice")[0] == "The invoice for the Zurich office is overdue."


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '"unbalanced',
        "deploy*",
        "-staging",
        "agent:a",
        "AND",
        "OR OR",
        "NOT",
        "NEAR(",
        "NEAR(a b",
        "()",
        "{}",
        "^start",
        "a'b",
        "\x00",
        "💥 emoji",
        "über straße",
        "x" * 5000,
        "",
        "   ",
    ],
)
def test_punctuation_and_query_syntax_never_raise(query):
    engine = bm25_only()
    item = turn("deploy to staging with agent a")
    engine.write(item)
    alone = engine.recall(RecallRequest(T, ("agent:",), query, 5))
    beside_a_word = engine.recall(RecallRequest(T, ("agent:",), f"{query} staging", 5))
    assert {h.item.id for h in alone} <= {item.id}
    assert [h.item.id for h in beside_a_word] == [item.id]


def test_a_query_of_only_stopwords_ranks_by_them_without_error():
    engine = bm25_only()
    engine.write(turn("what is it about the weather"))
    engine.write(turn("rain tomorrow"))
    assert recall(engine, "What is it about?") == ["what is it about the weather", "rain tomorrow"]


def test_build_beliefs_one_per_document_and_thread_never_duplicated():
    engine = bm25_only()
    long_body = "word " * 100
    engine.write(MemoryItem(T, "source:wiki", "document", "Paris is the capital. It is big.", title="France"))
    engine.write(MemoryItem(T, "source:wiki", "document", long_body + "end."))
    engine.write(turn("Second question here. More.", thread="th", turn=2))
    engine.write(turn("First question here! And more.", thread="th", turn=0))
    engine.write(turn("Sure, I can help.", thread="th", turn=1, role="assistant"))
    engine.write(turn("Only a reply.", thread="replies", turn=0, role="assistant"))
    assert engine.build_beliefs(T).built == 3
    assert engine.build_beliefs(T).built == 0
    beliefs = engine.inspect(T).beliefs
    assert beliefs[0] == Belief("France", "states", "Paris is the capital.", "supported", 0.5)
    assert beliefs[1].subject == "source:wiki" and len(beliefs[1].object) <= 240
    assert beliefs[2] == Belief("th", "states", "First question here!", "supported", 0.5)


def test_a_rare_match_outranks_many_common_ones():
    engine = create({"embedder": "none"})
    for i in range(200):
        engine.write(turn(f"status update {i} for the project"))
    engine.write(turn("project zebra status is green"))
    assert recall(engine, "zebra project status", limit=1) == ["project zebra status is green"]


def test_embeddings_find_a_paraphrase_that_bm25_misses():
    pytest.importorskip("numpy", reason="the embeddings extra (numpy) is not installed")
    pytest.importorskip("static_model", reason="the embeddings extra (tokenlearn-static-model) is not installed")
    query = "Which foods should I avoid eating?"
    texts = ["I am allergic to peanuts and shellfish.", *DISTRACTORS]
    dense, plain = create({"embedder": "static"}), bm25_only()
    for engine in (dense, plain):
        for text in texts:
            engine.write(turn(text))
    assert dense.info().settings["ranking"] == "bm25+dense(static-64d)+recency"
    assert len(recall(plain, query)) == len(texts)  # no shared content word, yet the list fills
    assert recall(dense, query)[0] == "I am allergic to peanuts and shellfish."
    assert recall(dense, "allergic to peanuts")[0] == "I am allergic to peanuts and shellfish."


class FlakyEmbedder:
    """Deterministic 2-d vectors (by the letter count of the first word) that can be told to fail."""

    name = "flaky-2d"

    def __init__(self) -> None:
        self.fail = False

    def embed(self, texts):
        import numpy

        if self.fail:
            raise RuntimeError("model crashed")
        angles = [len(text.split()[0]) if text.split() else 0 for text in texts]
        return numpy.array([[math.cos(a), math.sin(a)] for a in angles], dtype=numpy.float32)


def test_an_embedder_failure_is_an_engine_error_and_loses_no_write():
    pytest.importorskip("numpy", reason="the embeddings extra (numpy) is not installed")
    from memeval.engines.reference.embedders import QueryVectors
    from memeval.engines.reference.engine import ReferenceEngine

    embedder = FlakyEmbedder()
    engine = ReferenceEngine(QueryVectors(embedder), min_similarity=0.9)
    engine.write(turn("apples are red"))
    embedder.fail = True
    engine.write(turn("bananas are yellow"))
    with pytest.raises(EngineError, match="flaky-2d failed: model crashed"):
        engine.recall(RecallRequest(T, ("agent:",), "kiwis?", 5))
    embedder.fail = False
    assert recall(engine, "bananas?")[0] == "bananas are yellow"
    assert recall(engine, "zebras")[0] == "apples are red"


def test_dense_search_equals_brute_force_cosine_over_random_sections_and_removals():
    numpy = pytest.importorskip("numpy", reason="the embeddings extra (numpy) is not installed")
    from memeval.engines.reference.embedders import DenseIndex, QueryVectors

    class Seeded:
        name = "seeded-8d"

        def embed(self, texts):
            vecs = [numpy.random.default_rng(int(t.split("-")[-1])).normal(size=8) for t in texts]
            return numpy.array([v / numpy.linalg.norm(v) for v in vecs], dtype=numpy.float32)

    rng = random.Random(3)
    for trial in range(40):
        index = DenseIndex(QueryVectors(Seeded()), min_similarity=rng.choice([-1.0, 0.0, 0.3]), tuning=Tuning(leaders=16))
        count = rng.randint(1, 300)
        nodes = [rng.randrange(10) for _ in range(count)]
        for doc in range(count):
            index.add(doc, nodes[doc], f"doc-{doc}")
        gone = set(rng.sample(range(count), rng.randint(0, count // 3)))
        index.remove(gone)
        sims = Seeded().embed([f"doc-{doc}" for doc in range(count)]) @ Seeded().embed([f"q-{1000 + trial}"])[0]
        for section in ([0], [1, 2], list(range(10)), list(range(8))):
            k = rng.randint(1, 20)
            want = [d for d in range(count) if nodes[d] in section and d not in gone and sims[d] >= index._floor]
            want = sorted(want, key=lambda d: (-sims[d], d))[:k]
            assert [doc for doc, _ in index.search(f"q-{1000 + trial}", section, k)] == want, (trial, section)


def test_a_large_tenant_in_compiled_code_recalls_exactly_what_numpy_recalls():
    # A large tenant scores a pack's question once for every section and each feedback query
    # adds its own terms to it; with BM25 alone the packs must be the numpy path's (MaxScore
    # sums in another order: scores equal to about 1e-16).
    from memeval.engines.reference import kernel as reference_kernel

    if not reference_kernel.available():
        pytest.skip("the fast extra (numba) is not installed")
    rng = random.Random(23)
    words = [f"{a}{b}" for a in ("ka", "lo", "mi", "ne", "ru", "ta") for b in ("po", "si", "de", "fa", "gu")]
    items = [turn(" ".join(rng.choices(words, k=rng.randint(3, 12))), node=f"agent:a{i % 5}", at=minute(i % 600),
                  thread=f"t{i % 17}", agent=f"a{i % 5}") for i in range(1500)]
    items += [MemoryItem(T, f"source:s{i % 3}", "document", " ".join(rng.choices(words, k=30)), title=f"Doc {i}")
              for i in range(40)]
    items += [MemoryItem(T, "learnings", "learning", " ".join(rng.choices(words, k=8))) for _ in range(30)]
    questions = [" ".join(rng.choices(words, k=rng.randint(2, 9))) for _ in range(12)]

    def packs(tuning: Tuning) -> list:
        engine = bm25_only(tuning)
        engine.write_many(items)
        out = []
        for question in questions:
            for nodes, limit in ((("learnings",), 24), (("source:",), 18), (("agent:a2",), 18), (("agent:",), 9)):
                hits = engine.recall(RecallRequest(T, nodes, question, limit, prefer_recent=True))
                out.append([(hit.item.id, hit.score) for hit in hits])
        return out

    # direct 0: no query counts as small, so none is scored in one flat run
    numpy_packs = packs(Tuning(direct=0))
    compiled_packs = packs(Tuning(direct=0, compiled_docs=0))
    assert [[doc for doc, _ in pack] for pack in compiled_packs] == [[doc for doc, _ in pack] for pack in numpy_packs]
    assert [score for pack in compiled_packs for _, score in pack] == pytest.approx(
        [score for pack in numpy_packs for _, score in pack], rel=1e-12)
