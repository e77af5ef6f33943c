"""The reference engine's fused ranking: sections fill, every signal counts, newer values win,
and the same settings hold on a held-out suite the ranking was never tuned on."""

from __future__ import annotations

import os

import pytest

from memeval.agent.lifecycle import AgentMemory, Timings
from memeval.engines.base import Engine, MemoryItem, RecallRequest
from memeval.engines.base import capabilities_of
from memeval.engines.reference.engine import create
from memeval.agent.freshness import HEADING, prefer_fresh
from memeval.agent.pack import Section
from memeval.report.files import read_run
from memeval.spec.model import Policy
from tests.conftest import FIXTURES, ROOT, cli

T = "tenant-r"
HELDOUT = os.path.join(FIXTURES, "heldout", "heldout.yaml")
SUITE = os.path.join(ROOT, "specs", "agent-memory.yaml")


def turn(text: str, at: str, node: str = "agent:a", **kw) -> MemoryItem:
    return MemoryItem(T, node, "turn", text, at=at, **kw)


def day(i: int) -> str:
    return f"2026-09-{1 + i:02d}T09:00:00Z"


def recall(engine: Engine, query: str, nodes=("agent:",), limit=10) -> list[str]:
    return [h.item.text for h in engine.recall(RecallRequest(T, tuple(nodes), query, limit))]


@pytest.fixture(params=["none", "auto"])
def engine(request) -> Engine:
    """Every ranking promise holds with and without the dense signal."""
    return create({"embedder": request.param})


def test_a_section_fills_to_its_limit_even_when_few_items_share_a_content_word(engine):
    texts = ["The deploy runbook lives in the wiki.", "Lunch is at noon.", "The printer is jammed.",
             "Standup moves to 10:00.", "Parking is free on Fridays.", "The VPN rotates keys weekly."]
    for i, text in enumerate(texts):
        engine.write(turn(text, day(i)))
    hits = recall(engine, "where is the deploy runbook?", limit=6)
    assert len(hits) == 6 and hits[0] == "The deploy runbook lives in the wiki."


def test_stopwords_count_at_low_weight(engine):
    engine.write(turn("Turn the inline receipts off.", day(0)))
    engine.write(turn("Receipts are rendered by the billing service.", day(1)))
    # "off" is the only word the first turn shares with the question besides "the".
    assert recall(engine, "what did they switch off?", limit=2)[0] == "Turn the inline receipts off."


def test_character_trigrams_meet_a_misspelling(engine):
    engine.write(turn("The Kubernetes cluster runs in Frankfurt.", day(0)))
    engine.write(turn("The office moved to Berlin last spring.", day(1)))
    assert recall(engine, "where does the kubernets clustr run?", limit=2)[0] == "The Kubernetes cluster runs in Frankfurt."


def test_a_newer_near_duplicate_supersedes_the_routine_ones(engine):
    for i in range(8):
        engine.write(turn(f"Nightly report: the export batch finished in {40 + i} minutes, 0 failed jobs.", day(i)))
    engine.write(turn("Nightly report: the export batch took 6 hours 5 minutes, 812 failed jobs.", day(9)))
    engine.write(turn("Nightly report: the export batch finished in 41 minutes, 0 failed jobs, and more words here.", day(3)))
    assert recall(engine, "How long did the nightly export batch take?", limit=3)[0].startswith(
        "Nightly report: the export batch took 6 hours")


def test_items_that_merely_share_a_topic_are_not_demoted(engine):
    engine.write(turn("New rule: any Halvorsen invoice above 10,000 EUR goes to Priya Nair for approval.", day(0)))
    for i in range(4):
        engine.write(turn(f"Halvorsen invoice HF-{2300 + i} for {1000 + i} EUR came in; route it to the AP queue.", day(1 + i)))
    hits = recall(engine, "Who approves Halvorsen invoices above 10,000 EUR?", limit=3)
    assert hits[0].startswith("New rule")


def test_feedback_brings_in_the_near_twin_of_the_best_match():
    """The answer shares no content word with the question, but several with the question's
    best match (Postgres, version 16, staging): the feedback pass ranks it above unrelated
    documents (without feedback it comes last)."""
    engine = create({"embedder": "none"})
    docs = [("Upgrade Postgres to 16", "Plan: upgrade the production Postgres cluster to version 16 in November, "
             "after staging has run on it for a month."),
            ("Heads-up", "Mateo: the staging Postgres moves to version 16 on Thursday night; the connection string "
             "then points at staging-db-2.internal."),
            ("Security policy", "Laptops use full-disk encryption and production access needs a hardware key."),
            ("Deploy README", "Deploys go through the ship CLI with a canary on 5% of traffic."),
            ("Data retention", "Support tickets are kept for 24 months and logs for 30 days.")]
    for i, (title, text) in enumerate(docs):
        engine.write(MemoryItem(T, "source:x", "document", text, title=title, at=day(i)))
    question = "Which hostname should the app use for the pre-production SQL server after the upgrade?"
    titles = [h.item.title for h in engine.recall(RecallRequest(T, ("source:",), question, 6))]
    assert titles.index("Heads-up") < titles.index("Data retention") and titles.index("Heads-up") < 3


def test_a_turn_gains_from_the_best_match_in_its_thread():
    """An introduction matches the name; the next turn of the same conversation answers the
    question in other words and comes second, ahead of other threads' turns (last without the
    thread signal)."""
    engine = create({"embedder": "none"})
    turns = [("intro", "Hi! I'm Dana Okafor. I lead data engineering at Verdant Foods."),
             ("intro", "My manager is Lucas Brenner; our quarterly review is on 3 October."),
             ("errands", "Draft a reply to the account rep saying we decide after the review."),
             ("errands", "Thanks, that's it."),
             ("errands", "Remind me to renew my passport; it expires in December."),
             ("errands", "For the migration channel, let's go with #dagster-move.")]
    for i, (thread, text) in enumerate(turns):
        engine.write(turn(text, day(i), role="user", thread=thread, turn=i))
    assert recall(engine, "Who does Dana report to?", limit=6)[1].startswith("My manager is Lucas Brenner")


def test_the_pack_moves_a_superseded_document_after_the_newer_turn():
    engine = create({"embedder": "auto"})
    engine.write(MemoryItem(T, "source:notion", "document", "Budget: 40,000 EUR for the Heron agency and campaign.",
                            title="Heron plan", at=day(0)))
    engine.write(turn("The agency gave us a discount, so the Heron budget is 47,500 EUR.", day(5), node="agent:pm"))
    memory = AgentMemory(engine, capabilities_of(engine), T, "pm", Policy(1200, 8, 6, 6, 3), Timings())
    pack = memory.pre_turn("t", 0, "What is the Heron budget?", 0, day(6), log=False).pack
    assert pack.sections[-1] == HEADING
    assert pack.markdown.index("47,500 EUR") < pack.markdown.index("40,000 EUR")


def test_sources_that_agree_or_are_undated_stay_where_they_are():
    items = {
        "a": MemoryItem(T, "source:x", "document", "The refund window is 30 days.", title="Policy", at=day(0)),
        "b": MemoryItem(T, "agent:a", "turn", "The refund window is 30 days, as always.", at=day(2)),
        "c": MemoryItem(T, "agent:a", "turn", "The refund window is 14 days now.", at=None),
    }
    sections = [Section("Brain", ["a"], refs=["a"]), Section("History", ["b", "c"], refs=["b", "c"])]
    assert prefer_fresh(sections, items, "How long is the refund window?") is sections
    assert [s.refs for s in sections] == [["a"], ["b", "c"]]


# The scenarios issue 14's targets were measured on. A scenario a user adds to specs/scenarios/
# (the README's walkthrough) is theirs to score; it does not move the ranking's targets.
SHIPPED = ("brain_lookup", "restart_recall", "contradictions", "tool_heavy", "team_handoff", "compaction", "isolation",
           "needle_in_noise", "learnings", "learning_from_feedback", "surprise", "conflicts", "abstention",
           "forgetting", "parking")


def recall_totals(suite: str, out: str, only: tuple[str, ...] = ()) -> dict:
    """The recall phase's totals of ``suite`` (its ``only`` scenarios) run on the default reference engine."""
    assert cli(["run", suite, "--out", out, "--quiet", *(["--only", ",".join(only)] if only else [])]) == 0
    return read_run(os.path.join(out, "run.json")).to_json()["totals"]["recall"]


def test_the_main_suite_meets_the_targets(tmp_path):
    """The default install's figures on the suite with its haystack noise (issue 30; issue 14's
    targets of 92% and 85% on paraphrases were set on the stuffed suite): pack hit >= 85%, >= 33
    of 43 paraphrases, fresh first >= 80%, no leak (measured: 85/100, 33/43, 13/15, 0 of 9)."""
    totals = recall_totals(SUITE, str(tmp_path), SHIPPED)
    hit, fresh, leaks = totals["all"]["pack_hit"], totals["all"]["fresh_first"], totals["all"]["leaks"]
    paraphrase = totals["styles"]["paraphrase"]["pack_hit"]
    assert hit["n"] == 100 and hit["k"] >= 85
    assert paraphrase["n"] == 43 and paraphrase["k"] >= 33
    assert fresh["n"] == 15 and fresh["value"] >= 0.8
    assert leaks["n"] == 9 and leaks["k"] == 0


def test_the_held_out_suite_meets_the_targets_with_the_same_settings(tmp_path):
    """The same settings on a suite they were never tuned on: every ranked probe hits (13/13,
    paraphrases 4/4), the current value comes first (2/2), no leak."""
    totals = recall_totals(HELDOUT, str(tmp_path))
    hit, fresh, leaks = totals["all"]["pack_hit"], totals["all"]["fresh_first"], totals["all"]["leaks"]
    paraphrase = totals["styles"]["paraphrase"]["pack_hit"]
    assert (hit["k"], hit["n"]) == (13, 13)
    assert (paraphrase["k"], paraphrase["n"]) == (4, 4)
    assert (fresh["k"], fresh["n"]) == (2, 2)
    assert leaks["n"] == 1 and leaks["k"] == 0


class CountingEmbedder:
    """Deterministic 2-d vectors that count the texts they embed."""

    name = "counting-2d"

    def __init__(self) -> None:
        self.embedded = 0

    def embed(self, texts):
        import numpy

        self.embedded += len(texts)
        return numpy.array([[1.0, float(len(t) % 7)] for t in texts], dtype=numpy.float32)


def test_vectors_are_computed_at_write_time_in_batches():
    pytest.importorskip("numpy")
    from memeval.engines.reference.embedders import QueryVectors
    from memeval.engines.reference.engine import ReferenceEngine

    embedder = CountingEmbedder()
    engine = ReferenceEngine(QueryVectors(embedder), min_similarity=-1.0)
    for i in range(4096 + 5):
        engine.write(turn(f"note number {i}", day(i % 20)))
    assert embedder.embedded == 4096  # one full batch, embedded by the write that filled it
    recall(engine, "note number 7", limit=1)
    # The partial batch and the query at the first search (a candidate holds every word of the
    # query, so no feedback query is embedded).
    assert embedder.embedded == 4096 + 5 + 1


def test_the_ann_index_answers_a_large_section_close_to_exact():
    pytest.importorskip("faiss", reason="the ann extra (faiss-cpu) is not installed")
    import numpy

    from memeval.engines.reference.embedders import QueryVectors
    from memeval.engines.reference.engine import ReferenceEngine
    from memeval.engines.reference.tuning import Tuning

    # An IVF index from 200 vectors; a search probes 6 of the 12 lists they train.
    tuning = Tuning(ann_min=200, probe=6, scan=0, batch=100)
    rng = numpy.random.default_rng(5)
    table = {}

    class Random8d:
        name = "random-8d"

        def embed(self, texts):
            rows = [table.setdefault(t, rng.standard_normal(8).astype(numpy.float32)) for t in texts]
            vecs = numpy.array(rows, dtype=numpy.float32)
            return vecs / numpy.linalg.norm(vecs, axis=1, keepdims=True)

    engine = ReferenceEngine(QueryVectors(Random8d()), min_similarity=-1.0, tuning=tuning)
    for i in range(600):
        engine.write(turn(f"entry {i}", day(i % 20), node=f"agent:a{i % 3}"))
    dense = engine._tenants[T].dense
    query = "entry 17"
    found = dense.search(query, (0, 1, 2), 10)
    got = [doc for doc, _ in found]
    sims = dense._vecs[: dense._rows] @ dense._queries.vector(query)
    want = list(numpy.argsort(-sims, kind="stable")[:10])
    assert dense._ann is not None and len(dense._ann) == 600
    assert len(set(got) & set(want)) >= 9
    # The index's approximate cosines are rescored: each hit carries its exact cosine, best first.
    # (float32 sums in another order than this test's product: equal to about 1e-7)
    scores = [score for _, score in found]
    assert scores == sorted(scores, reverse=True)
    assert all(score == pytest.approx(float(sims[doc]), abs=1e-6) for doc, score in found)


def test_the_pack_orders_supersession_by_the_instant_not_the_timestamp_string():
    # "10:00+02:00" reads later than "09:00Z" as a string but is an hour earlier.
    items = {"old": MemoryItem(T, "agent:a", "turn", "The Heron budget is 40,000 EUR.", at="2026-09-01T10:00:00+02:00"),
             "new": MemoryItem(T, "agent:a", "turn", "The Heron budget is 47,500 EUR.", at="2026-09-01T09:00:00Z")}
    sections = [Section("History", ["old", "new"], refs=["old", "new"])]
    moved = prefer_fresh(sections, items, "What is the Heron budget?")
    assert [s.refs for s in moved] == [["new"], ["old"]]
