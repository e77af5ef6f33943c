"""The reference engine's ``path`` setting: tenants saved on close, reopened identical."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from memeval.engines.base import MemoryItem, RecallRequest, ToolCallRef
from memeval.engines.reference import embedders
from memeval.engines.reference import kernel as reference_kernel
from memeval.engines.reference.engine import create
from memeval.engines.reference.tuning import Tuning
from memeval.errors import EngineError, UsageError

WORDS = "alpha beta gamma delta omega sigma kappa theta lima echo bravo tango".split()


def corpus(rng: random.Random, count: int) -> list[MemoryItem]:
    items = []
    for i in range(count):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9)))
        tenant = f"t{i % 3}/../x" if i % 3 == 2 else f"t{i % 3}"  # a name that is no safe folder name
        at = None if i % 5 == 0 else f"2026-09-01T{i // 60 % 24:02d}:{i % 60:02d}:00Z"
        calls = (ToolCallRef("search", f"c{i}"),) if i % 7 == 0 else ()
        items.append(MemoryItem(tenant, f"agent:a{i % 4}", "turn", text, thread=f"th{i % 6}", turn=i,
                                agent=f"a{i % 4}", at=at, tool_calls=calls, tags=("x",) if i % 11 == 0 else (),
                                title="T" if i % 13 == 0 else None, role="assistant" if i % 2 else "user"))
    return items


def snapshot(engine, tenants, queries) -> list:
    out = []
    for tenant in tenants:
        for query in [None, *queries]:
            for nodes in (("agent:",), ("agent:a1",), ("agent:a2", "agent:a3")):
                hits = engine.recall(RecallRequest(tenant, nodes, query, 7))
                out.append([(h.item, round(h.score, 9)) for h in hits])
        page, listed = engine.page(tenant, None, 50), []
        while True:
            listed.extend(page.items)
            if page.cursor is None:
                break
            page = engine.page(tenant, page.cursor, 50)
        out.append(listed)
        out.append(engine.inspect(tenant))
    return out


@pytest.mark.parametrize("large", [False, True], ids=["numpy", "compiled"])
@pytest.mark.parametrize("embedder", ["none", "static"])
def test_a_closed_engine_reopens_with_identical_recalls_listings_and_beliefs(tmp_path, embedder, large):
    tuning = Tuning()
    if large:
        # Every tenant counts as large: searches, text signals and dense picks run in compiled
        # code, and a pack's question is kept across recalls (and must not survive a write).
        if not reference_kernel.available():
            pytest.skip("the fast extra (numba) is not installed")
        tuning = replace(tuning, compiled_docs=0, direct=0)  # direct 0: no query is small enough for one flat run
    if embedder == "static":
        pytest.importorskip("static_model", reason="the embedding model is not installed")
        # Small enough that the tenants build an ANN index (when faiss is installed), which
        # is then saved and reopened too.
        tuning = replace(tuning, ann_min=50, batch=64)
    rng = random.Random(11)
    items = corpus(rng, 600)
    tenants = sorted({item.tenant for item in items})
    queries = [" ".join(rng.sample(WORDS, 3)) for _ in range(5)]
    settings = {"embedder": embedder, "path": str(tmp_path / "memory")}
    first = create(settings, tuning)
    first.write_many(items[:400])
    first.build_beliefs(tenants[0])
    first.forget(tenants[1], tuple(item.id for item in items[1:200:9]))
    first.erase(tenants[2])
    first.write_many(items[400:])
    before = snapshot(first, tenants, queries)
    graphs = sorted(path.name for path in (tmp_path / "memory").rglob("ann.faiss"))
    first.close()
    if embedder == "static" and embedders.available():
        assert graphs == [] and len(sorted((tmp_path / "memory").rglob("ann.faiss"))) == len(tenants)
    second = create(settings, tuning)
    assert snapshot(second, tenants, queries) == before
    # It stays writable: a replay is still a replay, and new writes are found.
    assert second.write(items[3]).replayed and not second.write(items[5]).replayed  # items[5]: erased
    second.write(MemoryItem(tenants[0], "agent:a1", "turn", "zulu zulu"))
    assert [h.item.text for h in second.recall(RecallRequest(tenants[0], ("agent:",), "zulu", 3))][0] == "zulu zulu"
    second.close()
    third = create(settings, tuning)
    assert third.recall(RecallRequest(tenants[0], ("agent:",), "zulu", 1))[0].item.text == "zulu zulu"


def one_saved_tenant(folder):
    """The settings of an engine saved under ``folder`` with one tenant of one item, and that
    tenant's folder."""
    settings = {"embedder": "none", "path": str(folder)}
    engine = create(settings)
    engine.write(MemoryItem("t", "agent:a", "turn", "hello there"))
    engine.close()
    return settings, next((folder / "tenants").iterdir())


def test_an_unchanged_tenant_is_not_rewritten_and_a_bad_path_is_a_usage_error(tmp_path):
    settings, saved = one_saved_tenant(tmp_path)
    stamp = (saved / "store.json").stat().st_mtime_ns
    create(settings).close()
    assert (saved / "store.json").stat().st_mtime_ns == stamp
    with pytest.raises(UsageError, match="path must be a folder name"):
        create({"path": 3})


def test_a_tenant_folder_left_without_its_tenant_json_is_an_error_not_an_empty_tenant(tmp_path):
    settings, saved = one_saved_tenant(tmp_path)
    (saved / "tenant.json").unlink()  # a cleanup that stopped part way
    with pytest.raises(EngineError, match="has no tenant.json"):
        create(settings)
