"""What the reference engine's ranking caches and shortcuts must keep: the answers it would give
without them (supersession shapes, the shares a pack's recalls measure once, tie order)."""

from __future__ import annotations

import pytest

from memeval.agent.lifecycle import AgentMemory, Timings
from memeval.text import supersede
from memeval.engines.base import MemoryItem, RecallRequest, capabilities_of
from memeval.engines.reference.engine import create
from memeval.engines.reference.rank import Query
from memeval.spec.model import Policy

T = "tenant-s"


def turn(i: int, text: str, thread: str = "t") -> MemoryItem:
    return MemoryItem(T, "agent:a", "turn", text, role="user", thread=thread, turn=i, agent="a",
                      at=f"2026-09-{1 + i:02d}T09:00:00Z")


@pytest.mark.parametrize("text", [
    "Budget is 47,500 for Q3", "Ask O'Neil-Smith about the iOS 17 rollout.", "Plain lower-case words only",
    "Zoë and Élodie moved to Zürich", "x-Ray's fooBar, 3.5% up; ² and ٣", "", "ALL CAPS. Then Mixed",
])
def test_a_shape_finds_the_values_the_full_token_pattern_finds(text):
    """The digit-free shortcut (names only) gives the same tokens as the full pattern."""
    pattern = supersede._TOKEN if supersede._DIGIT.search(text) else supersede._NAME
    assert pattern.findall(text) == supersede._TOKEN.findall(text)


def test_the_sections_of_one_pack_measure_each_candidate_once(monkeypatch):
    engine = create({"embedder": "none"})
    engine.write_many([turn(i, f"The deploy runbook step {i} moved to the wiki.") for i in range(12)])
    measured: list[str] = []
    real = Query.measure

    def counting(self: Query, flat: str) -> tuple[float, float]:
        measured.append(flat)
        return real(self, flat)

    monkeypatch.setattr(Query, "measure", counting)
    memory = AgentMemory(engine, capabilities_of(engine), T, "a", Policy(), Timings())
    memory.pre_turn("other", 0, "where did the deploy runbook move?", 0, None, log=False)
    # "agent:a" and "agent:" hold the same twelve turns: both sections rank them all.
    assert len(measured) == len(set(measured)) == 12


def test_forget_drops_the_flattened_texts_and_measured_shares_and_a_replay_keeps_them():
    engine = create({"embedder": "none"})
    engine.write_many([turn(i, f"Standup moves to room {i}.") for i in range(3)])
    question = "where does standup move?"
    first = engine.recall(RecallRequest(T, ("agent:",), question, 3))
    store = engine._tenants[T]
    asked = store.texts.query(question)
    engine.write(turn(0, "Standup moves to room 0."))  # a replay: stores nothing
    assert store.texts.query(question) is asked
    gone = store._ids[first[0].item.id]
    assert store.texts.flat(gone) == " standup moves to room 2  "
    engine.forget(T, (first[0].item.id,))
    assert store.texts.query(question) is not asked
    assert store.texts.flat(gone) == "  "
    after = engine.recall(RecallRequest(T, ("agent:",), question, 3))
    assert [h.item.id for h in after] == [h.item.id for h in first[1:]]


def test_equal_scores_come_newest_first():
    engine = create({"embedder": "none"})
    # Three turns that share nothing with the question (nor a thread) score 0 and fill the pool.
    engine.write_many([turn(i, text, f"t{i}") for i, text in enumerate(["Lunch is at noon.", "Parking is free.",
                                                               "The printer jammed.", "Deploy the runbook."])])
    hits = engine.recall(RecallRequest(T, ("agent:",), "deploy", 4))
    assert [h.item.text for h in hits] == ["Deploy the runbook.", "The printer jammed.", "Parking is free.",
                                           "Lunch is at noon."]
    assert hits[1].score == hits[2].score == hits[3].score
