"""Running one scenario's steps against one engine.

The scenario's tenants live under run-unique namespaces, every call is timed, and everything
written is forgotten in a ``finally`` (unless ``keep``). An engine failure anywhere inside the
scenario (a write, the settle, synthesis or a probe's own calls) ends it and marks it errored with
a one-line reason; the probe that failed and those not yet run are recorded as errored, never as
misses, and what was measured before stays.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from memeval.agent import AgentMemory, Timings
from memeval.engines.base import Engine, MemoryItem
from memeval.errors import EngineError, Unsupported
from memeval.plan import Step, plan_scenario, turn_time
from memeval.run.options import RunOptions
from memeval.run.cleanup import clear_tenant
from memeval.run.probes import ProbeRunner
from memeval.run.synthesis import synthesise
from memeval.run.waits import settle
from memeval.score.probe import unscored
from memeval.spec.checks import tenant_key
from memeval.spec.model import Scenario, Suite
from memeval.script import play_exchange


@dataclass
class ScenarioState:
    """What a scenario has written and gathered so far."""

    namespaces: dict[str, str]
    written: dict[str, set[str]] = field(default_factory=dict)
    by_ref: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    tool_calls: int = 0
    forgotten_declared: bool = False
    derived: dict[str, list[str]] | None = None
    synthesis: dict[str, Any] = field(default_factory=dict)
    replies: dict[tuple[str, int], str] = field(default_factory=dict)

    def note_write(self, ref: str, tenant_ns: str, item_id: str) -> None:
        """Remember a write for settle, declared forgets and cleanup."""
        self.written.setdefault(tenant_ns, set()).add(item_id)
        self.by_ref.setdefault(ref, []).append((tenant_ns, item_id))


def namespace(run_id: str, scenario: str, tenant: str) -> str:
    """The engine tenant for one scenario tenant: unique per run, readable."""
    return f"eval-{run_id}-{tenant_key(scenario, tenant)}"


class ScenarioRun:
    """Executes the plan of one scenario; :meth:`run` returns its run.json record."""

    def __init__(self, suite: Suite, scenario: Scenario, engine: Engine, capabilities: frozenset[str],
                 run_id: str, options: RunOptions, timings: Timings):
        self.suite, self.scenario, self.engine, self.caps = suite, scenario, engine, capabilities
        self.options, self.timings = options, timings
        self.state = ScenarioState({t: namespace(run_id, scenario.id, t) for t in scenario.tenants})
        self.probes: list[dict[str, Any]] = []
        self.runner = ProbeRunner(self)

    def memory(self, agent: str, tenant: str) -> AgentMemory:
        """The lifecycle for ``agent`` over scenario tenant ``tenant``."""
        return AgentMemory(self.engine, self.caps, self.state.namespaces[tenant], agent, self.suite.policy, self.timings,
                           tenant_name=tenant)

    def run(self) -> dict[str, Any]:
        """Run every step; always forget what was written unless ``keep``."""
        steps = plan_scenario(self.suite, self.scenario)
        started = time.perf_counter()
        error = None
        done = 0
        try:
            for done, step in enumerate(steps):
                if step.kind != "forget_all":
                    self._step(step)
        except EngineError as err:
            error = str(err)
            self._mark_rest(steps[done:], error)
        finally:
            cleanup = self._forget_all()
        return self._record(error, cleanup, (time.perf_counter() - started) * 1000)

    def _step(self, step: Step) -> None:
        handler = getattr(self, f"_do_{step.kind}")
        handler(step)

    def _do_write_document(self, step: Step) -> None:
        doc = next(d for d in self.scenario.documents if d.id == step.ref)
        item = MemoryItem(self.state.namespaces[doc.tenant], f"source:{doc.source}", "document", doc.text,
                          title=doc.title, at=step.at)
        self._write(step.ref, item, "brain ingest")

    def _do_write_learning(self, step: Step) -> None:
        lrn = next(x for x in self.scenario.learnings if x.id == step.ref)
        tags = (f"kind:{lrn.kind}",) + ((f"confidence:{lrn.confidence}",) if lrn.confidence is not None else ())
        item = MemoryItem(self.state.namespaces[lrn.tenant], "learnings", "learning", lrn.text, at=step.at, tags=tags)
        self._write(step.ref, item, "learning write")

    def _write(self, ref: str, item: MemoryItem, label: str) -> None:
        start = time.perf_counter()
        receipt = self.engine.write(item)
        self.timings.add(label, (time.perf_counter() - start) * 1000)
        self.state.note_write(ref, item.tenant, receipt.id)

    def _do_exchange(self, step: Step) -> None:
        thread = self.scenario.thread(step.ref)
        d = self.suite.defaults
        memory = self.memory(thread.agent, thread.tenant)
        logged, receipt, reply = play_exchange(memory, thread, step.index, step.at or "",
                                               turn_time(d, thread.day, 2 * step.index + 1), d.window,
                                               self.suite.agent.reply)
        self.state.replies[(thread.id, step.index)] = reply
        ns = self.state.namespaces[thread.tenant]
        if logged:
            self.state.note_write(thread.id, ns, logged)
        self.state.note_write(thread.id, ns, receipt.id)
        self.state.tool_calls += len(thread.exchanges[step.index].tools)

    def _do_settle(self, step: Step) -> None:
        d = self.suite.defaults
        timeout = self.options.settle_timeout_s or d.settle_timeout_s
        start = time.perf_counter()
        settle(self.engine, self.state.written, timeout, d.settle_poll_s)
        self.state.synthesis["settle_ms"] = round((time.perf_counter() - start) * 1000, 3)
        self.timings.add("settle (all writes listed)", self.state.synthesis["settle_ms"])

    def _do_forget_declared(self, step: Step) -> None:
        if "forget" not in self.caps:
            return
        for ref in self.scenario.forget:
            by_tenant: dict[str, list[str]] = {}
            for ns, item_id in self.state.by_ref.get(ref, []):
                by_tenant.setdefault(ns, []).append(item_id)
            for ns, ids in by_tenant.items():
                self.engine.forget(ns, tuple(ids))
                self.state.written[ns] -= set(ids)
        self.state.forgotten_declared = True

    def _do_probe(self, step: Step) -> None:
        self.probes.append(self.runner.run(step))

    def _do_synthesise(self, step: Step) -> None:
        synthesise(self)

    def _mark_rest(self, steps: tuple[Step, ...], reason: str) -> None:
        probes = {p.id: p for p in self.scenario.probes}
        for step in steps:
            if step.kind == "probe":
                self.probes.append(unscored(self.scenario.id, probes[step.ref], step.phase, "errored", reason))

    def _forget_all(self) -> dict[str, Any]:
        if self.options.keep:
            return {"forgotten": False, "reason": "kept (--keep)"}
        try:
            for ns, ids in self.state.written.items():
                clear_tenant(self.engine, self.caps, ns, ids)
        except Unsupported as err:
            return {"forgotten": False, "reason": str(err)}
        except EngineError as err:
            return {"forgotten": False, "reason": f"cleanup failed: {err}"}
        return {"forgotten": True, "reason": None}

    def _record(self, error: str | None, cleanup: dict[str, Any], ms: float) -> dict[str, Any]:
        s = self.scenario
        return {
            "id": s.id, "about": s.about, "status": "errored" if error else "ok", "error": error,
            "tenants": dict(self.state.namespaces), "writes": sum(len(v) for v in self.state.by_ref.values()),
            "tool_calls": self.state.tool_calls, "synthesis": self.state.synthesis, "cleanup": cleanup,
            "ms": round(ms, 3),
        }
