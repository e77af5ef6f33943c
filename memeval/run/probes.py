"""Running one probe through its lifecycle route and scoring what comes back."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from memeval.engines.base import MemoryItem
from memeval.errors import Unsupported
from memeval.pack import Pack
from memeval.plan import Step, turn_time
from memeval.score.probe import score_pack, unscored
from memeval.spec.model import Probe

if TYPE_CHECKING:
    from memeval.run.scenario import ScenarioRun


class ProbeRunner:
    """Runs probes for one scenario run (routes: ask, continue, resume, brief, compact)."""

    def __init__(self, run: "ScenarioRun"):
        self.run_ = run
        self.by_id = {p.id: p for p in run.scenario.probes}

    def run(self, step: Step) -> dict[str, Any]:
        """The scored record of the probe named by ``step`` in ``step.phase`` (``unsupported`` when
        the engine lacks a capability the route needs).

        Raises:
            EngineError: the engine failed; the scenario ends there and records this probe and the
                ones after it as errored (see :meth:`ScenarioRun.run`).
        """
        probe = self.by_id[step.ref]
        sid = self.run_.scenario.id
        if "forgetting" in probe.groups and self.run_.scenario.forget and not self.run_.state.forgotten_declared:
            return unscored(sid, probe, step.phase, "unsupported", "the engine cannot forget")
        start = time.perf_counter()
        try:
            pack = self._route(probe, step.phase)
        except Unsupported as err:
            return unscored(sid, probe, step.phase, "unsupported", str(err))
        ms = (time.perf_counter() - start) * 1000
        self.run_.timings.add(f"probe {probe.route}", ms)
        derived = None
        if step.phase == "synthesis" and self.run_.state.derived is not None:
            derived = self.run_.state.derived.get(probe.tenant, [])
        return score_pack(sid, probe, step.phase, pack.markdown, pack.tokens, ms, derived)

    def _route(self, probe: Probe, phase: str) -> Pack:
        run = self.run_
        memory = run.memory(probe.agent, probe.tenant)
        isolated = run.suite.agent.probe_questions == "isolated"
        if probe.route in ("ask", "continue"):
            if probe.route == "ask":
                thread, turn, in_prompt = f"probe-{probe.id}-{phase}", 0, 0
            else:
                turn = run.scenario.thread(probe.thread or "").turns
                thread, in_prompt = probe.thread or "", max(0, turn - run.suite.defaults.window)
            ctx = memory.pre_turn(thread, turn, probe.question, in_prompt, None, log=isolated)
            if ctx.logged:
                run.engine.forget(run.state.namespaces[probe.tenant], (ctx.logged,))
            return ctx.pack
        if probe.route == "resume":
            return memory.start_session(probe.thread, probe.focus)
        if probe.route == "brief":
            return memory.context_brief(probe.focus)
        return memory.recall_for_compaction(probe.thread or "", self._dropped(probe), probe.focus)

    def _dropped(self, probe: Probe) -> list[MemoryItem]:
        """The dropped turns as the agent had them in its prompt (text, role, time)."""
        run = self.run_
        thread = run.scenario.thread(probe.thread or "")
        first, last = probe.dropped or (0, 0)
        ns = run.state.namespaces[thread.tenant]
        d = run.suite.defaults
        items = []
        for turn in range(first, last + 1):
            index = turn // 2
            text, role = ((thread.exchanges[index].user, "user") if turn % 2 == 0
                          else (run.state.replies[(thread.id, index)], "assistant"))
            items.append(MemoryItem(ns, f"agent:{thread.agent}", "turn", text, role=role, thread=thread.id,
                                    turn=turn, agent=thread.agent, at=turn_time(d, thread.day, turn)))
        return items
