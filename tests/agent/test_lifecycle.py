"""The agent lifecycle on the reference engine: what a pack may and may not hold, and the side
effects the original harness hid (probe questions leaking, recalled lines written back)."""

from memeval.agent.lifecycle import AgentMemory, Timings
from memeval.engines.base import MemoryItem
from memeval.engines.reference.engine import create
from memeval.agent.pack import tokens
from memeval.score.extractive import extract_answer
from memeval.runner.script import play_exchange, scripted_reply
from memeval.spec.model import Exchange, Policy, Thread, Tool


def _memory(engine, agent="support", policy=Policy()):
    return AgentMemory(engine, frozenset(engine.info().capabilities), "t1", agent, policy, Timings())


def _thread(n):
    return Thread("long", "t1", "support", 0, tuple(Exchange(f"fact number {i}: the code word is word{i}") for i in range(n)))


def test_pre_turn_leaves_out_the_turns_still_in_the_prompt():
    engine = create({"embedder": "none"})
    memory = _memory(engine)
    thread = _thread(6)
    for i in range(6):
        play_exchange(memory, thread, i, f"2026-09-01T09:{2 * i:02d}:00Z", f"2026-09-01T09:{2 * i + 1:02d}:00Z", 8, "neutral")
    ctx = memory.pre_turn("long", 12, "what is the code word?", in_prompt_from=4, at=None, log=False)
    assert "word0" in ctx.pack.markdown and "word1" in ctx.pack.markdown
    for i in range(2, 6):  # user turns 4..10 are still in the prompt
        assert f"word{i}" not in ctx.pack.markdown


def test_logged_turn_is_not_in_its_own_pack_and_read_only_probes_write_nothing():
    engine = create({"embedder": "none"})
    memory = _memory(engine)
    ctx = memory.pre_turn("new", 0, "where is the parking permit invoice?", 0, "2026-09-01T09:00:00Z", log=True)
    assert ctx.logged and "parking permit invoice" not in ctx.pack.markdown
    before = len(engine.page("t1").items)
    memory.pre_turn("probe", 0, "unique probe question zebra?", 0, None, log=False)
    assert len(engine.page("t1").items) == before


def test_an_item_appears_once_and_sections_come_in_priority_order():
    engine = create({"embedder": "none"})
    engine.write(MemoryItem("t1", "learnings", "learning", "Deploys happen on Tuesdays."))
    engine.write(MemoryItem("t1", "source:notion", "document", "Deploys are frozen in December.", title="Deploy policy"))
    engine.write(MemoryItem("t1", "agent:support", "turn", "The deploys moved to Wednesdays", thread="x", turn=0,
                            agent="support", at="2026-09-02T09:00:00Z"))
    pack = _memory(engine).pre_turn("q", 0, "when do deploys happen?", 0, None, log=False).pack
    assert pack.sections == ("Learnings", "Brain", "This agent's history")
    assert pack.markdown.count("Wednesdays") == 1  # own history, not again under Team
    assert len(pack.refs) == len(set(pack.refs)) == 3


def test_budget_is_respected():
    engine = create({"embedder": "none"})
    for i in range(30):
        engine.write(MemoryItem("t1", "source:web", "document", f"deploy note {i} " + "filler " * 60, title=f"Note {i}"))
    pack = _memory(engine, policy=Policy(budget_tokens=300)).pre_turn("q", 0, "deploy note", 0, None, log=False).pack
    assert pack.tokens <= 300 and pack.trimmed > 0 and tokens(pack.markdown) == pack.tokens


def test_neutral_reply_never_writes_a_recalled_line_back_but_echo_memory_does():
    engine = create({"embedder": "none"})
    engine.write(MemoryItem("t1", "source:notion", "document", "The office is at 12 Harbour Street.", title="Office"))
    memory = _memory(engine)
    question = Exchange("Where is the office?")
    pack = memory.pre_turn("q", 0, question.user, 0, None, log=False).pack
    assert scripted_reply(question, pack, "neutral") == "Noted."
    assert scripted_reply(question, pack, "echo_memory") == f"Going by memory: {extract_answer(pack.markdown, question.user)}"
    assert "12 Harbour Street" in scripted_reply(question, pack, "echo_memory")


def test_a_tool_result_survives_only_where_the_reply_carries_it():
    engine = create({"embedder": "none"})
    memory = _memory(engine)
    thread = Thread("inc", "t1", "support", 0, (Exchange("check the dashboards", tools=(
        Tool("grafana.query", "p99 latency 2300 ms"), Tool("pager.status", "secret pager rota", carried=False))),))
    play_exchange(memory, thread, 0, "2026-09-01T09:00:00Z", "2026-09-01T09:01:00Z", 8, "neutral")
    stored = " ".join(i.text for i in engine.page("t1").items)
    assert "grafana.query returned: p99 latency 2300 ms" in stored
    assert "secret pager rota" not in stored
    reply = next(i for i in engine.page("t1").items if i.role == "assistant")
    assert [t.name for t in reply.tool_calls] == ["grafana.query", "pager.status"]
