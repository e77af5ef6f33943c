"""The pack: rendering, budget trimming from the end, and the units MRR counts."""

from memeval.engines.base import MemoryItem
from memeval.agent.pack import Section, assemble, render_item, units


def test_render_item_forms():
    doc = MemoryItem("t", "source:notion", "document", "Body  text", title="Handbook")
    turn = MemoryItem("t", "agent:a", "turn", "hello", role="user", agent="a", at="2026-09-01T09:05:00Z")
    assert render_item(doc) == "Handbook: Body text"
    assert render_item(turn) == "[2026-09-01 09:05] user: hello"
    assert render_item(turn, show_agent=True) == "[2026-09-01 09:05] a/user: hello"
    assert render_item(MemoryItem("t", "learnings", "learning", "x" * 700)).endswith("…")


def test_budget_trims_last_bullet_of_last_section_first():
    sections = [Section("Learnings", ["a" * 40], refs=["l1"]), Section("Team", ["b" * 40, "c" * 40], refs=["t1", "t2"])]
    full = assemble([Section(s.heading, list(s.bullets), refs=list(s.refs)) for s in sections], 10_000)
    assert full.refs == ("l1", "t1", "t2") and full.trimmed == 0
    small = assemble(sections, full.tokens - 5)
    assert small.refs == ("l1", "t1") and small.trimmed == 1 and small.tokens <= full.tokens - 5


def test_empty_sections_disappear():
    pack = assemble([Section("Learnings"), Section("Brain", ["x"], refs=["d"])], 1000)
    assert pack.sections == ("Brain",)
    assert "## Learnings" not in pack.markdown


def test_units_skip_front_matter_title_and_headings():
    md = "---\ntenant: t\n---\n# Memory\n\n## Brain\n- first\n- second\n\n## Earlier\nprose line\n"
    assert units(md) == [("Brain", "first"), ("Brain", "second"), ("Earlier", "prose line")]
