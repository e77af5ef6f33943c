"""Running one scenario's steps against one engine.

The scenario's tenants live under run-unique namespaces, every call is timed, and everything
written is forgotten in a ``finally`` (unless ``keep``). An engine failure anywhere inside the
scenario (a write, the settle, synthesis or a probe's own calls) ends it and marks it errored with
a one-line reason; the probe that failed and those not yet run are recorded as errored, never as
misses, and what was measured before stays.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import assert_never

from memeval.agent.lifecycle import Timings
from memeval.engines.base import Engine, MemoryItem
from memeval.errors import EngineError, Unsupported
from memeval.plan import Step, StepKind, plan_scenario, turn_time
from memeval.record import Cleanup, Phase, ProbeResult, ScenarioResult, Synthesis, TimingLabel
from memeval.runner.cleanup import clear_tenant
from memeval.runner.context import ScenarioContext
from memeval.runner.options import RunOptions
from memeval.runner.probes import ProbeRunner
from memeval.runner.synthesis import build_beliefs, derived_lines, inspect_derived, wait_for_enrichment
from memeval.runner.waits import settle
from memeval.runner.evidence import turn_texts, with_evidence
from memeval.score.probe import unscored
from memeval.spec.checks import tenant_key
from memeval.spec.model import Scenario, Suite
from memeval.runner.script import play_exchange


@dataclass
class ScenarioState:
    """What a scenario has written and gathered so far."""

    namespaces: dict[str, str]
    written: dict[str, set[str]] = field(default_factory=dict)
    by_ref: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    tool_calls: int = 0
    forgotten_declared: bool = False
    derived: dict[str, list[str]] | None = None
    synthesis: Synthesis = field(default_factory=Synthesis)
    replies: dict[tuple[str, str, int], str] = field(default_factory=dict)

    def will_write(self, tenant_ns: str) -> None:
        """Note, before writing, that ``tenant_ns`` will be written: the cleanup then also lists
        and forgets a write whose receipt never came back (Ctrl-C while it was in flight)."""
        self.written.setdefault(tenant_ns, set())

    def note_write(self, ref: str, tenant_ns: str, item_id: str) -> None:
        """Remember a write for settle, declared forgets and cleanup."""
        self.written.setdefault(tenant_ns, set()).add(item_id)
        self.by_ref.setdefault(ref, []).append((tenant_ns, item_id))


def namespace(run_id: str, scenario: str, tenant: str) -> str:
    """The engine tenant for one scenario tenant: unique per run, readable."""
    return f"eval-{run_id}-{tenant_key(scenario, tenant)}"


class ScenarioRun:
    """Executes the plan of one scenario; :meth:`run` returns its result."""

    def __init__(self, suite: Suite, scenario: Scenario, engine: Engine, capabilities: frozenset[str],
                 run_id: str, options: RunOptions, timings: Timings):
        self.suite, self.scenario, self.engine, self.caps = suite, scenario, engine, capabilities
        self.options, self.timings = options, timings
        self.state = ScenarioState({t: namespace(run_id, scenario.id, t) for t in scenario.tenants})
        self.probes: list[ProbeResult] = []
        self.ctx = ScenarioContext(engine, capabilities, scenario, self.state.namespaces, suite.defaults, suite.policy,
                                   suite.agent.probe_questions, options.enrich_wait_s or 0.0,
                                   options.enrich_poll_s, timings, self.state.replies, self.state.written)
        self.runner = ProbeRunner(self.ctx)
        self.interrupted = False
        """Set when a Ctrl-C came during this scenario's own cleanup: the result is complete, the
        cleanup is not (the caller records the result, then stops the run)."""
        self.texts = turn_texts(scenario)

    def run(self, on_step: Callable[[tuple[Step, ...], int], None] | None = None) -> ScenarioResult:
        """Run every step; always forget what was written unless ``keep``. ``on_step`` hears of
        each step (the plan and the step's index) before it runs, for a progress display. A
        cleanup that fails (or is cut short by Ctrl-C) makes the scenario errored: its tenants
        still hold data, and ``--resume`` removes it and runs the scenario again."""
        steps = plan_scenario(self.suite, self.scenario)
        started = time.perf_counter()
        error = None
        done = 0
        try:
            for done, step in enumerate(steps):
                if on_step is not None:
                    on_step(steps, done)
                self._step(step)
        except EngineError as err:
            error = str(err)
            self._mark_rest(steps[done:], error)
        finally:
            cleanup, failure = self._forget_all()
        return self._result(error or failure, cleanup, (time.perf_counter() - started) * 1000)

    def _step(self, step: Step) -> None:
        kind: StepKind = step.kind
        match kind:
            case "write_document":
                self._write_document(step)
            case "write_learning":
                self._write_learning(step)
            case "exchange":
                self._exchange(step)
            case "replay":
                self._replay(step)
            case "settle":
                self._settle()
            case "forget_declared":
                self._forget_declared()
            case "probe":
                probe = next(p for p in self.scenario.probes if p.id == step.ref)
                result = self.runner.run(step, self.state.forgotten_declared, self.state.derived)
                self.probes.append(with_evidence(result, probe, self.texts))
            case "synthesise":
                self._synthesise()
            case "forget_all":
                pass  # done in run()'s finally, whatever happened before
            case _:
                assert_never(kind)

    def _write_document(self, step: Step) -> None:
        doc = next(d for d in self.scenario.documents if d.id == step.ref)
        item = MemoryItem(self.state.namespaces[doc.tenant], f"source:{doc.source}", "document", doc.text,
                          title=doc.title, at=step.at)
        self._write(step.ref, item, TimingLabel.BRAIN_INGEST)

    def _write_learning(self, step: Step) -> None:
        lrn = next(x for x in self.scenario.learnings if x.id == step.ref)
        tags = (f"kind:{lrn.kind}",) + ((f"confidence:{lrn.confidence}",) if lrn.confidence is not None else ())
        item = MemoryItem(self.state.namespaces[lrn.tenant], "learnings", "learning", lrn.text, at=step.at, tags=tags)
        self._write(step.ref, item, TimingLabel.LEARNING_WRITE)

    def _write(self, ref: str, item: MemoryItem, label: TimingLabel) -> None:
        self.state.will_write(item.tenant)
        start = time.perf_counter()
        receipt = self.engine.write(item)
        self.timings.add(label, (time.perf_counter() - start) * 1000)
        self.state.note_write(ref, item.tenant, receipt.id)

    def _exchange(self, step: Step) -> None:
        thread = self.scenario.thread(step.ref, step.tenant)
        d = self.suite.defaults
        memory = self.ctx.memory(thread.agent, thread.tenant)
        self.state.will_write(self.state.namespaces[thread.tenant])
        logged, receipt, reply = play_exchange(memory, thread, step.index, step.at or "",
                                               turn_time(d, thread.day, 2 * step.index + 1, thread.start_s), d.window,
                                               self.suite.agent.reply)
        self.state.replies[(thread.tenant, thread.id, step.index)] = reply
        ns = self.state.namespaces[thread.tenant]
        if logged:
            self.state.note_write(thread.id, ns, logged)
        self.state.note_write(thread.id, ns, receipt.id)
        self.state.tool_calls += len(thread.exchanges[step.index].tools)

    def _replay(self, step: Step) -> None:
        thread = self.scenario.thread(step.ref)
        d = self.suite.defaults
        turns = []
        for i, ex in enumerate(thread.exchanges):
            turns.append((2 * i, "user", ex.user, turn_time(d, thread.day, 2 * i, thread.start_s)))
            if ex.reply is not None:
                turns.append((2 * i + 1, "assistant", ex.reply, turn_time(d, thread.day, 2 * i + 1, thread.start_s)))
            self.state.replies[(thread.tenant, thread.id, i)] = ex.reply or ""
        ns = self.state.namespaces[thread.tenant]
        self.state.will_write(ns)
        for receipt in self.ctx.memory(thread.agent, thread.tenant).replay(thread.id, turns):
            self.state.note_write(thread.id, ns, receipt.id)

    def _settle(self) -> None:
        d = self.suite.defaults
        timeout = self.options.settle_timeout_s or d.settle_timeout_s
        start = time.perf_counter()
        settle(self.engine, self.state.written, timeout, d.settle_poll_s)
        ms = round((time.perf_counter() - start) * 1000, 3)
        self.state.synthesis = replace(self.state.synthesis, settle_ms=ms)
        self.timings.add(TimingLabel.SETTLE, ms)

    def _forget_declared(self) -> None:
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

    def _synthesise(self) -> None:
        """Each synthesis step is recorded as soon as it is done: a later failure keeps it."""
        state = self.state
        state.synthesis = replace(state.synthesis, enrichment=wait_for_enrichment(self.ctx))
        state.synthesis = replace(state.synthesis, builds=build_beliefs(self.ctx))
        if "inspect" in self.caps:
            derived = inspect_derived(self.ctx)
            state.synthesis = replace(state.synthesis, derived=derived)
            state.derived = derived_lines(derived)

    def _mark_rest(self, steps: tuple[Step, ...], reason: str) -> None:
        probes = {p.id: p for p in self.scenario.probes}
        for step in steps:
            if step.kind == "probe":
                self.probes.append(unscored(self.scenario.id, probes[step.ref], step.probe_phase, "errored", reason))

    def _forget_all(self) -> tuple[Cleanup, str | None]:
        """The cleanup's record, and the failure that leaves the scenario's data in the engine."""
        if self.options.keep:
            return Cleanup(forgotten=False, reason="kept (--keep)"), None
        try:
            for ns, ids in self.state.written.items():
                clear_tenant(self.engine, self.caps, ns, ids)
        except Unsupported as err:
            return Cleanup(forgotten=False, reason=str(err)), None
        except EngineError as err:
            reason = f"cleanup failed: {err}"
            return Cleanup(forgotten=False, reason=reason), reason
        except KeyboardInterrupt:
            self.interrupted = True
            reason = "cleanup interrupted (Ctrl-C); --resume removes what is left"
            return Cleanup(forgotten=False, reason=reason), reason
        return Cleanup(forgotten=True, reason=None), None

    def _result(self, error: str | None, cleanup: Cleanup, ms: float) -> ScenarioResult:
        s = self.scenario
        return ScenarioResult(
            id=s.id, about=s.about, status="errored" if error else "ok", error=error,
            tenants=dict(self.state.namespaces), writes=sum(len(v) for v in self.state.by_ref.values()),
            tool_calls=self.state.tool_calls, synthesis=self.state.synthesis, cleanup=cleanup, ms=round(ms, 3),
        )
