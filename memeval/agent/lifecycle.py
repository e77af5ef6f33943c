"""The agent-memory lifecycle on top of any engine: ``pre_turn``, ``post_turn``,
``start_session``, ``recall_for_compaction`` and a context brief.

The pack's sections, in priority order: Learnings, Brain, This agent's history, Team
conversations. An item appears once, in the first section that has it. Sections over-fetch
(×3) and then filter out what must not be recalled: the turns of the current thread that are
still in the prompt (from ``in_prompt_from`` on) and the turn being logged.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from memeval.engines.base import (Answers, BuildsBeliefs, Engine, MemoryItem, RecallRequest, ToolCallRef, WriteReceipt,
                                  WritesBatch)
from memeval.agent.freshness import prefer_fresh
from memeval.agent.pack import Pack, Section, assemble, render_item
from memeval.record import TimingLabel
from memeval.spec.model import Policy

OVERFETCH = 3
THREAD_FETCH = 200
SUMMARY_QUESTION = "What was discussed, decided and left open?"


@dataclass(frozen=True)
class TurnContext:
    """What ``pre_turn`` returns: the pack, and the id of the logged user turn (if logged)."""

    pack: Pack
    logged: str | None = None


@dataclass
class Timings:
    """Milliseconds per timing label, appended as calls happen (labels in order of first sample)."""

    samples: dict[TimingLabel, list[float]] = field(default_factory=dict)

    def add(self, label: TimingLabel, ms: float) -> None:
        """Record one sample (ms, rounded to 3 places)."""
        self.samples.setdefault(label, []).append(round(ms, 3))

    def frozen(self) -> dict[TimingLabel, tuple[float, ...]]:
        """The samples as the record holds them."""
        return {label: tuple(values) for label, values in self.samples.items()}


@dataclass(frozen=True)
class Exclusion:
    """Turns that must not be recalled: thread ``thread`` from turn ``from_turn`` on."""

    thread: str | None = None
    from_turn: int = 0

    def excludes(self, item: MemoryItem) -> bool:
        """Whether the item is one of those turns."""
        return self.thread is not None and item.thread == self.thread and (item.turn or 0) >= self.from_turn


class AgentMemory:
    """One agent's view of one tenant's memory.

    ``tenant`` is the engine namespace and ``tenant_name`` the name a person reads (the spec's
    tenant, so a pack never carries run-specific ids); ``agent`` the agent id; ``policy`` sizes
    the sections.
    Every call is timed into ``timings`` under its lifecycle name.
    """

    def __init__(self, engine: Engine, capabilities: frozenset[str], tenant: str, agent: str, policy: Policy,
                 timings: Timings, tenant_name: str | None = None):
        self.engine, self.capabilities = engine, capabilities
        self.tenant, self.agent, self.policy, self.timings = tenant, agent, policy, timings
        self.tenant_name = tenant_name or tenant

    def pre_turn(self, thread: str, turn: int, text: str, in_prompt_from: int, at: str | None, log: bool = True) -> TurnContext:
        """Log the user turn (unless ``log`` is false) and return a pack for ``text`` that leaves
        out this thread's turns from ``in_prompt_from`` on."""
        start = time.perf_counter()
        logged = None
        if log:
            logged = self._log(thread, turn, "user", text, (), at).id
        pack = self._pack(text, Exclusion(thread, min(in_prompt_from, turn)))
        self.timings.add(TimingLabel.PRE_TURN_LOGGED if log else TimingLabel.PRE_TURN, _ms(start))
        return TurnContext(pack, logged)

    def post_turn(self, thread: str, turn: int, text: str, tool_calls: tuple[ToolCallRef, ...], at: str | None) -> WriteReceipt:
        """Log the assistant's reply with its tool calls (names and ids; results only live in the text),
        then build the tenant's beliefs when ``policy.build_beliefs_every`` divides ``turn + 1`` and
        the engine has the ``beliefs`` capability (on another engine nothing is built: the run
        reports the policy as unsupported)."""
        start = time.perf_counter()
        receipt = self._log(thread, turn, "assistant", text, tool_calls, at)
        every = self.policy.build_beliefs_every
        if every and (turn + 1) % every == 0 and self.builds_beliefs:
            assert isinstance(self.engine, BuildsBeliefs)
            self.engine.build_beliefs(self.tenant)
        self.timings.add(TimingLabel.POST_TURN, _ms(start))
        return receipt

    @property
    def builds_beliefs(self) -> bool:
        """Whether the engine can build beliefs (what ``policy.build_beliefs_every`` needs)."""
        return "beliefs" in self.capabilities and isinstance(self.engine, BuildsBeliefs)

    def start_session(self, thread: str | None = None, focus: str | None = None) -> Pack:
        """A read-only pack to start a session: the thread's latest turns first (when resuming a
        thread), then the standard sections ranked for ``focus``, or newest first without one."""
        start = time.perf_counter()
        lead: list[Section] = []
        if thread is not None:
            lead.append(self._thread_section("Earlier in this thread", thread, max(self.policy.history, 1)))
        pack = self._pack(focus, Exclusion(), lead)
        self.timings.add(TimingLabel.START_SESSION, _ms(start))
        return pack

    def recall_for_compaction(self, thread: str, dropped: list[MemoryItem], focus: str | None = None) -> Pack:
        """A pack for the turns that left the prompt: first "Earlier in this conversation" (the
        engine's grounded answer where it has one, else the latest ``limit`` dropped turns fetched
        back from the agent's memory newest first, in turn order),
        then the standard sections ranked for ``focus``, else for a gist of the dropped turns.
        Turns after the dropped range are still in the prompt and are left out."""
        start = time.perf_counter()
        span = (min(d.turn or 0 for d in dropped), max(d.turn or 0 for d in dropped))
        limit = min(max(self.policy.history, len(dropped)), 24)
        lead = [self._earlier(thread, focus, limit, span)]
        pack = self._pack(focus or gist(dropped), Exclusion(thread, span[1] + 1), lead)
        self.timings.add(TimingLabel.COMPACTION, _ms(start))
        return pack

    def context_brief(self, focus: str | None = None, heading: str | None = None) -> Pack:
        """The pack as a ``context.md`` file: YAML front matter, then the standard sections under
        ``# heading`` (default ``# Memory``)."""
        start = time.perf_counter()
        front = f"---\ntenant: {self.tenant_name}\nagent: {self.agent}\nfocus: {focus or 'newest'}\n---\n"
        pack = self._pack(focus, Exclusion(), [], front, heading)
        self.timings.add(TimingLabel.BRIEF, _ms(start))
        return pack

    def replay(self, thread: str, turns: list[tuple[int, str, str, str]]) -> list[WriteReceipt]:
        """Write past turns ``(turn, role, text, at)`` of ``thread`` as they stand, with no recall
        between them: in one :meth:`~memeval.engines.base.WritesBatch.write_many` call where the
        engine has it, else one write each."""
        start = time.perf_counter()
        items = [self._item(thread, turn, role, text, (), at) for turn, role, text, at in turns]
        receipts = self.engine.write_many(items) if isinstance(self.engine, WritesBatch) else \
            [self.engine.write(item) for item in items]
        self.timings.add(TimingLabel.REPLAY, _ms(start))
        return receipts

    def _log(self, thread: str, turn: int, role: str, text: str, calls: tuple[ToolCallRef, ...], at: str | None) -> WriteReceipt:
        return self.engine.write(self._item(thread, turn, role, text, calls, at))

    def _item(self, thread: str, turn: int, role: str, text: str, calls: tuple[ToolCallRef, ...], at: str | None) -> MemoryItem:
        return MemoryItem(self.tenant, f"agent:{self.agent}", "turn", text, role=role, thread=thread, turn=turn,
                          agent=self.agent, at=at, tool_calls=calls)

    def _pack(self, query: str | None, exclude: Exclusion, lead: list[Section] | None = None, front: str = "",
              title: str | None = None) -> Pack:
        p = self.policy
        plan = [("Learnings", ("learnings",), p.learnings, False), ("Brain", ("source:",), p.brain, False),
                ("This agent's history", (f"agent:{self.agent}",), p.history, False),
                ("Team conversations", ("agent:",), p.team, True)]
        sections = list(lead or [])
        seen: dict[str, MemoryItem | None] = {ref: None for s in sections for ref in s.refs}
        for heading, nodes, limit, show_agent in plan:
            sections.append(self._section(heading, nodes, limit, query, exclude, seen, show_agent))
        return assemble(prefer_fresh(sections, seen, query), p.budget_tokens, front, title or "Memory")

    def _section(self, heading: str, nodes: tuple[str, ...], limit: int, query: str | None, exclude: Exclusion,
                 seen: dict[str, MemoryItem | None], show_agent: bool) -> Section:
        section = Section(heading)
        if limit <= 0:
            return section
        hits = self.engine.recall(RecallRequest(self.tenant, nodes, query, limit * OVERFETCH))
        for hit in hits:
            item = hit.item
            if item.id in seen or exclude.excludes(item):
                continue
            seen[item.id] = item
            section.bullets.append(render_item(item, show_agent=show_agent))
            section.refs.append(item.id)
            if len(section.bullets) >= limit:
                break
        return section

    def _thread_section(self, heading: str, thread: str, limit: int, turns: tuple[int, int] | None = None) -> Section:
        """The thread's latest ``limit`` turns (within ``turns`` when given), in turn order, from
        the agent's ``THREAD_FETCH`` newest items."""
        hits = self.engine.recall(RecallRequest(self.tenant, (f"agent:{self.agent}",), None, THREAD_FETCH))
        items = [h.item for h in hits if h.item.thread == thread
                 and (turns is None or turns[0] <= (h.item.turn or 0) <= turns[1])]
        section = Section(heading)
        for item in sorted(items, key=lambda i: i.turn or 0)[-limit:]:
            section.bullets.append(render_item(item))
            section.refs.append(item.id)
        return section

    def _earlier(self, thread: str, focus: str | None, limit: int, span: tuple[int, int]) -> Section:
        heading = "Earlier in this conversation"
        if "answer" in self.capabilities and isinstance(self.engine, Answers):
            text = self.engine.answer(self.tenant, focus or SUMMARY_QUESTION, (f"agent:{self.agent}",), limit)
            return Section(heading, prose=[line for line in text.splitlines() if line.strip()])
        return self._thread_section(heading, thread, limit, span)


def gist(dropped: list[MemoryItem], total: int = 600) -> str:
    """Each dropped turn's opening, oldest first, sharing ``total`` characters (≥ 40 each)."""
    ordered = sorted(dropped, key=lambda i: i.turn or 0)
    each = max(40, total // max(len(ordered), 1))
    return " ".join(" ".join(i.text.split())[:each] for i in ordered)[:total]


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0
