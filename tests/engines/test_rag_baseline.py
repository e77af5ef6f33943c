"""The rag-baseline engine against the engine contract, plus its chunking and cosine ranking."""

from __future__ import annotations

import importlib.util

import numpy
import pytest

from memeval.engines import create_engine
from memeval.engines.base import Engine, MemoryItem, RecallRequest
from memeval.engines.rag_baseline import chunks, create
from memeval.errors import EngineError, UsageError

pytestmark = pytest.mark.skipif(importlib.util.find_spec("static_model") is None,
                                reason="rag-baseline needs the embeddings extra (tokenlearn-static-model)")

T = "tenant-1"


def engine(**settings) -> Engine:
    return create(settings)


def turn(text: str, node: str = "agent:a", at: str | None = None, tenant: str = T, **kw) -> MemoryItem:
    return MemoryItem(tenant, node, "turn", text, at=at, **kw)


def minute(i: int) -> str:
    return f"2026-09-01T{9 + i // 60:02d}:{i % 60:02d}:00Z"


def recall(e: Engine, query: str | None, nodes: tuple[str, ...] = ("agent:",), limit: int = 10, tenant: str = T):
    return e.recall(RecallRequest(tenant, nodes, query, limit))


def test_registered_entry_point_declares_only_what_it_implements():
    e = create_engine("rag-baseline", {})
    info = e.info()
    assert info.name == "rag-baseline"
    assert info.capabilities == frozenset({"forget", "erase"})
    assert info.settings["chunk_words"] == 100 and info.settings["embedder"] == "static-64d"
    for missing in ("answer", "build_beliefs", "inspect", "usage", "backlog"):
        assert not hasattr(e, missing)


@pytest.mark.parametrize("settings", [{"chunk_words": 0}, {"chunk_overlap": -1}, {"chunk_words": True},
                                      {"chunk_words": 10, "chunk_overlap": 10}, {"embedder": "static"}])
def test_settings_are_validated(settings):
    with pytest.raises(UsageError):
        engine(**settings)


def test_chunks_overlap_and_cover_every_word():
    words = [f"w{i}" for i in range(250)]
    parts = chunks(" ".join(words), 100, 20)
    assert [p.split()[0] for p in parts] == ["w0", "w80", "w160"]
    assert parts[-1].split()[-1] == "w249"
    assert all(len(p.split()) <= 100 for p in parts)
    assert chunks("short text\nkept as is", 100, 20) == ["short text\nkept as is"]


def test_a_second_write_of_the_same_item_is_a_replay():
    e = engine()
    item = turn("Bob prefers tea over coffee")
    assert not e.write(item).replayed
    assert e.write(item).replayed
    assert [i.id for i in e.page(T).items] == [item.id]
    assert len(recall(e, "tea")) == 1


def test_tenants_never_see_each_other():
    e = engine()
    e.write(turn("Alice moved to Berlin", tenant="a"))
    e.write(turn("Bob moved to Paris", tenant="b"))
    assert [h.item.text for h in recall(e, "moved", tenant="a")] == ["Alice moved to Berlin"]
    assert [i.text for i in e.page("b").items] == ["Bob moved to Paris"]
    assert recall(e, "moved", tenant="c") == []


def test_nodes_select_by_exact_name_or_colon_prefix():
    e = engine()
    e.write(turn("deploy notes from agent a", node="agent:a"))
    e.write(turn("deploy notes from agent b", node="agent:b"))
    e.write(turn("deploy handbook", node="source:handbook"))
    assert {h.item.node for h in recall(e, "deploy", ("agent:",))} == {"agent:a", "agent:b"}
    assert {h.item.node for h in recall(e, "deploy", ("agent:b",))} == {"agent:b"}
    assert {h.item.node for h in recall(e, "deploy", ("source:handbook", "agent:a"))} == {"source:handbook", "agent:a"}
    assert recall(e, "deploy", ("learnings",)) == []


def test_limit_is_honoured_well_past_twenty():
    e = engine()
    for i in range(200):
        e.write(turn(f"note {i} about the release train", at=minute(i)))
    assert len(recall(e, "release", limit=150)) == 150
    assert len(recall(e, "release", limit=3)) == 3
    assert len(recall(e, None, limit=150)) == 150


def test_top_k_by_cosine_without_recency():
    e = engine()
    e.write(turn("Bob prefers tea over coffee and drinks it without sugar", at=minute(0)))
    e.write(turn("The database migration is scheduled for Saturday night", at=minute(5)))
    hits = recall(e, "what does Bob like to drink, tea or coffee?", limit=2)
    assert hits[0].item.text.startswith("Bob prefers tea")
    assert hits[0].score > hits[1].score
    query = e._queries.vector("what does Bob like to drink, tea or coffee?")  # type: ignore[attr-defined]
    expected = float(numpy.dot(e._queries.embed([hits[0].item.text])[0], query))  # type: ignore[attr-defined]
    assert hits[0].score == pytest.approx(expected, abs=1e-5)


def test_a_long_document_is_recalled_by_the_chunk_that_matches():
    e = engine(chunk_words=20, chunk_overlap=5)
    filler = " ".join(f"filler{i}" for i in range(60))
    doc = MemoryItem(T, "source:handbook", "document", f"{filler} The vacation allowance is thirty days per year.",
                     title="Handbook")
    e.write(doc)
    hit = recall(e, "vacation allowance days", ("source:",), limit=1)[0]
    assert hit.item.id == doc.id and "vacation allowance" in hit.item.text and hit.item.text != doc.text
    assert e.page(T).items[0].text == doc.text  # the listing shows the item, not a chunk


def test_page_is_newest_first_each_item_once_with_a_stable_cursor():
    e = engine()
    items = [turn(f"entry {i}", at=minute(i)) for i in range(7)] + [turn("undated entry")]
    for item in reversed(items):
        e.write(item)
    first = e.page(T, None, 3)
    e.write(turn("written between pages", at=minute(90)))
    seen = list(first.items)
    cursor = first.cursor
    while cursor:
        page = e.page(T, cursor, 3)
        seen += page.items
        cursor = page.cursor
    assert [i.text for i in seen] == [f"entry {i}" for i in range(6, -1, -1)] + ["undated entry"]
    with pytest.raises(EngineError):
        e.page(T, "not-a-cursor")
    with pytest.raises(EngineError):
        e.page(T, None, 0)
    with pytest.raises(EngineError):
        e.write(turn("bad time", at="yesterday"))


def test_forget_removes_every_chunk_from_recall_and_listing():
    e = engine(chunk_words=5, chunk_overlap=1)
    keep = turn("tea is kept here", at=minute(0))
    gone = turn("tea tea tea tea tea and more tea words to cut", at=minute(1))
    e.write(keep)
    e.write(gone)
    assert e.forget(T, (gone.id, "unknown")) == 1
    assert e.forget(T, (gone.id,)) == 0
    assert {h.item.id for h in recall(e, "tea")} == {keep.id}
    assert [i.id for i in e.page(T).items] == [keep.id]


def test_erase_empties_only_that_tenant():
    e = engine()
    e.write(turn("one", tenant="a"))
    e.write(turn("two", tenant="b"))
    e.erase("a")
    assert e.page("a").items == () and recall(e, "one", tenant="a") == []
    assert len(e.page("b").items) == 1
