"""The synthesis phase: wait for enrichment, build beliefs per tenant, then read the derived
layers (facts, beliefs, conflicts) where the engine allows."""

from __future__ import annotations

import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from memeval.engines.base import BuildsBeliefs, HasBacklog, Inspects
from memeval.run.waits import drain

if TYPE_CHECKING:
    from memeval.run.scenario import ScenarioRun


def synthesise(run: "ScenarioRun") -> None:
    """Run the synthesis phase of one scenario, recording what happened in its state."""
    record = run.state.synthesis
    record["enrichment"] = _enrichment(run)
    start = time.perf_counter()
    outcomes: Counter[str] = Counter()
    counts: list[int | None] = []
    if "beliefs" in run.caps and isinstance(run.engine, BuildsBeliefs):
        for ns in run.state.namespaces.values():
            receipt = run.engine.build_beliefs(ns)
            outcomes[receipt.outcome] += 1
            counts.append(receipt.built)
    ms = (time.perf_counter() - start) * 1000
    run.timings.add("synthesis (all builds)", ms)
    built = None if not counts or None in counts else sum(counts)  # unknown when any build gave no count
    record.update(outcomes=dict(outcomes), built=built, ms=round(ms, 3))
    if "inspect" in run.caps and isinstance(run.engine, Inspects):
        record["derived"], run.state.derived = _inspect(run, run.engine)


def _enrichment(run: "ScenarioRun") -> dict[str, Any]:
    wait = run.options.enrich_wait_s or 0.0
    if wait <= 0:
        return {"waited": False}
    start = time.perf_counter()
    if "backlog" in run.caps and isinstance(run.engine, HasBacklog):
        result = drain(run.engine, wait, run.options.enrich_poll_s)
        label = "enrichment (queue drained)"
    else:
        time.sleep(wait)
        result = {"fixed_wait_s": wait}
        label = "enrichment (fixed wait)"
    ms = (time.perf_counter() - start) * 1000
    run.timings.add(label, ms)
    return {"waited": True, "ms": round(ms, 3), **result}


def _inspect(run: "ScenarioRun", engine: Inspects) -> tuple[dict[str, Any], dict[str, list[str]]]:
    summary: dict[str, Any] = {}
    lines: dict[str, list[str]] = {}
    for tenant, ns in run.state.namespaces.items():
        derived = engine.inspect(ns)
        facts = [f.line() for f in derived.facts]
        beliefs = [b.line() for b in derived.beliefs]
        lines[tenant] = facts + beliefs
        summary[tenant] = {
            "facts": facts, "beliefs": beliefs,
            "conflicts": [c.line() for c in derived.conflicts] if "conflicts" in run.caps else None,
            "stances": dict(Counter(b.stance for b in derived.beliefs)),
            "confidences": [b.confidence for b in derived.beliefs if b.confidence is not None],
        }
    return summary, lines
