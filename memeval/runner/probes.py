"""Running one probe through its lifecycle route and scoring what comes back."""

from __future__ import annotations

import time
from typing import assert_never

from memeval.agent.lifecycle import AgentMemory
from memeval.engines.base import MemoryItem
from memeval.errors import Unsupported
from memeval.agent.pack import Pack
from memeval.plan import Step, turn_time
from memeval.record import Phase, ProbeResult, Route, TimingLabel
from memeval.runner.context import ScenarioContext
from memeval.score.probe import score_pack, unscored
from memeval.spec.model import Probe


class ProbeRunner:
    """Runs probes for one scenario run (routes: ask, continue, resume, brief, compact)."""

    def __init__(self, ctx: ScenarioContext):
        self.ctx = ctx
        self.by_id = {p.id: p for p in ctx.scenario.probes}

    def run(self, step: Step, forgotten: bool, derived: dict[str, list[str]] | None) -> ProbeResult:
        """The scored result of the probe named by ``step`` in ``step.phase`` (``unsupported`` when
        the engine lacks a capability the route needs, or the probe checks declared forgets the
        engine did not make). ``forgotten``: the scenario's declared forgets were made;
        ``derived``: per tenant, the engine's fact and belief lines after synthesis (None: not
        inspected).

        Raises:
            EngineError: the engine failed; the scenario ends there and records this probe and the
                ones after it as errored (see :meth:`ScenarioRun.run`).
        """
        probe = self.by_id[step.ref]
        sid = self.ctx.scenario.id
        phase = step.probe_phase
        if probe.checks_forgetting and self.ctx.scenario.forget and not forgotten:
            return unscored(sid, probe, phase, "unsupported", "the engine cannot forget")
        start = time.perf_counter()
        try:
            pack = self._route(probe, phase)
        except Unsupported as err:
            return unscored(sid, probe, phase, "unsupported", str(err))
        ms = (time.perf_counter() - start) * 1000
        self.ctx.timings.add(TimingLabel.probe(probe.route), ms)
        lines = derived.get(probe.tenant, []) if phase == "synthesis" and derived is not None else None
        return score_pack(sid, probe, phase, pack.markdown, pack.tokens, ms, lines)

    def _route(self, probe: Probe, phase: Phase) -> Pack:
        ctx = self.ctx
        memory = ctx.memory(probe.agent, probe.tenant)
        route = probe.route
        match route:
            case "ask":
                return self._ask(memory, probe, f"probe-{probe.id}-{phase}", 0, 0)
            case "continue":
                turn = ctx.scenario.thread(probe.thread or "", probe.tenant).turns
                return self._ask(memory, probe, probe.thread or "", turn, max(0, turn - ctx.defaults.window))
            case "resume":
                return memory.start_session(probe.thread, probe.focus)
            case "brief":
                return memory.context_brief(probe.focus, probe.heading)
            case "compact":
                return memory.recall_for_compaction(probe.thread or "", self._dropped(probe), probe.focus)
            case _:
                assert_never(route)

    def _ask(self, memory: AgentMemory, probe: Probe, thread: str, turn: int, in_prompt: int) -> Pack:
        """The pre-turn pack for the probe's question. ``probe_questions``: read_only, the question
        is not logged; isolated, its logged turn is forgotten at once; kept, it stays (noted in
        ``ctx.written`` so the scenario's cleanup forgets it)."""
        ctx = self.ctx
        mode = ctx.probe_questions
        turn_ctx = memory.pre_turn(thread, turn, probe.question, in_prompt, None, log=mode != "read_only")
        if turn_ctx.logged and mode == "isolated":
            ctx.engine.forget(ctx.namespaces[probe.tenant], (turn_ctx.logged,))
        elif turn_ctx.logged:
            ctx.written.setdefault(ctx.namespaces[probe.tenant], set()).add(turn_ctx.logged)
        return turn_ctx.pack

    def _dropped(self, probe: Probe) -> list[MemoryItem]:
        """The dropped turns as the agent had them in its prompt (text, role, time); with
        ``dropped_roles: user``, only the user turns of the range."""
        ctx = self.ctx
        thread = ctx.scenario.thread(probe.thread or "", probe.tenant)
        first, last = probe.dropped or (0, 0)
        ns = ctx.namespaces[thread.tenant]
        items = []
        step = 2 if probe.dropped_roles == "user" else 1
        for turn in range(first + (first % 2 if step == 2 else 0), last + 1, step):
            index = turn // 2
            text, role = ((thread.exchanges[index].user, "user") if turn % 2 == 0
                          else (ctx.replies[(thread.tenant, thread.id, index)], "assistant"))
            items.append(MemoryItem(ns, f"agent:{thread.agent}", "turn", text, role=role, thread=thread.id,
                                    turn=turn, agent=thread.agent, at=turn_time(ctx.defaults, thread.day, turn, thread.start_s)))
        return items
