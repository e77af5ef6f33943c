"""Planning: a pure function from a suite to the ordered steps of each scenario. No I/O.

Every scenario expands to: write (documents, learnings, conversations exchange by exchange, or a
replayed thread in one step) →
settle → [forget what the scenario declares, settle the forget] → probe (phase recall) →
synthesise → probe again (phase synthesis) → forget everything written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memeval.spec.units import suite_scenarios
from memeval.spec.model import Defaults, Scenario, Suite
from memeval.spec.times import instant
from memeval.vocab import PHASES, Phase


StepKind = Literal["write_document", "write_learning", "exchange", "replay", "settle", "forget_declared", "probe", "synthesise",
                   "forget_all"]
"""What a planned step does."""


@dataclass(frozen=True)
class Step:
    """One planned action. ``ref`` names the record it acts on; ``phase`` is set for probes."""

    kind: StepKind
    scenario: str
    ref: str = ""
    index: int = 0
    phase: Phase | None = None
    at: str | None = None
    note: str = ""
    tenant: str | None = None
    """The scenario tenant of an exchange's thread (thread ids are unique per tenant)."""

    @property
    def probe_phase(self) -> Phase:
        """The phase a probe step runs in.

        Raises:
            ValueError: the step is not a probe step (it has no phase).
        """
        if self.phase is None:
            raise ValueError(f"a {self.kind} step has no phase")
        return self.phase


def timestamp(epoch: str, day: int, seconds: float = 0.0) -> str:
    """RFC 3339 UTC time ``day`` days and ``seconds`` after ``epoch``."""
    return instant(epoch, day, seconds).strftime("%Y-%m-%dT%H:%M:%SZ")


def turn_time(defaults: Defaults, day: int, turn: int, start_s: float = 0.0) -> str:
    """When turn ``turn`` of a thread starting on ``day`` at ``start_s`` seconds after the
    epoch's time happened (turns are evenly spaced)."""
    return timestamp(defaults.epoch, day, start_s + turn * defaults.turn_spacing_s)


def plan_scenario(suite: Suite, scenario: Scenario) -> tuple[Step, ...]:
    """The ordered steps of one scenario."""
    d = suite.defaults
    sid = scenario.id
    steps: list[Step] = []
    for doc in scenario.documents:
        at = timestamp(d.epoch, doc.day) if doc.day is not None else None
        steps.append(Step("write_document", sid, doc.id, at=at, note=f"{doc.tenant}/source:{doc.source}"))
    for lrn in scenario.learnings:
        at = timestamp(d.epoch, lrn.day) if lrn.day is not None else None
        steps.append(Step("write_learning", sid, lrn.id, at=at, note=f"{lrn.tenant}/learnings"))
    every = suite.policy.build_beliefs_every
    for thread in scenario.threads:
        if thread.replay:
            steps.append(Step("replay", sid, thread.id, at=turn_time(d, thread.day, 0, thread.start_s),
                              note=f"{thread.agent}@{thread.tenant}, {len(thread.exchanges)} exchanges"))
            continue
        for i, _ in enumerate(thread.exchanges):
            at = turn_time(d, thread.day, 2 * i, thread.start_s)
            builds = " + belief build" if every and (2 * i + 2) % every == 0 else ""
            steps.append(Step("exchange", sid, thread.id, index=i, at=at, note=f"{thread.agent}@{thread.tenant}{builds}",
                              tenant=thread.tenant))
    writes = len(scenario.documents) + len(scenario.learnings) + sum(t.turns for t in scenario.threads)
    steps.append(Step("settle", sid, note=f"{writes} writes"))
    if scenario.forget:
        steps.append(Step("forget_declared", sid, ",".join(scenario.forget)))
    for phase in PHASES:
        if phase == "synthesis":
            steps.append(Step("synthesise", sid))
        for probe in scenario.probes:
            if phase in probe.phases:
                steps.append(Step("probe", sid, probe.id, phase=phase, note=f"{probe.route} by {probe.agent}@{probe.tenant} [{probe.style}]"))
    steps.append(Step("forget_all", sid, note=f"tenants {', '.join(scenario.tenants)}"))
    return tuple(steps)


def plan_suite(suite: Suite, only: tuple[str, ...] = ()) -> dict[str, tuple[Step, ...]]:
    """Steps per scenario, in suite order, restricted to ``only`` when given."""
    return {s.id: plan_scenario(suite, s) for s in suite_scenarios(suite, only)}


def render_plan(suite: Suite, plans: dict[str, tuple[Step, ...]]) -> str:
    """The plan as text, one step per line (what ``memeval plan`` prints; golden-tested)."""
    lines = [f"suite {suite.name}: {len(plans)} scenario(s)"]
    if suite.noise is not None:  # its distractors are the first document writes of every scenario
        source = f"drawn from {suite.noise.file}" if suite.noise.file else "generated"
        lines.append(f"haystack noise: {suite.noise.tokens:,} tokens per tenant, {source}, seed {suite.noise.seed}; "
                     "written first, as source:drive documents")
    by_id = {s.id: s.origin for s in suite.scenarios}
    for sid, steps in plans.items():
        origin = by_id.get(sid, suite.dataset.origin if suite.dataset else None)
        lines.append(f"scenario {sid} ({origin})" if origin else f"scenario {sid}")
        for n, step in enumerate(steps, 1):
            lines.append(f"  {n:3d} {_describe(step)}")
    return "\n".join(lines) + "\n"


def _describe(step: Step) -> str:
    k = step.kind
    if k == "write_document":
        return f"write       document {step.ref} -> {step.note}" + (f" @ {step.at}" if step.at else "")
    if k == "write_learning":
        return f"write       learning {step.ref} -> {step.note}" + (f" @ {step.at}" if step.at else "")
    if k == "exchange":
        return f"exchange    {step.ref}#{step.index} {step.note} (turns {2 * step.index}-{2 * step.index + 1}) @ {step.at}"
    if k == "replay":
        return f"replay      {step.ref} {step.note} as written, no recall before a turn @ {step.at}"
    if k == "settle":
        return f"settle      until {step.note} are listed"
    if k == "forget_declared":
        return f"forget      {step.ref} (declared)"
    if k == "probe":
        return f"probe       {step.phase:<9} {step.ref}: {step.note}"
    if k == "synthesise":
        return "synthesise  drain enrichment, build beliefs per tenant"
    return f"forget      everything written ({step.note})"
