"""The synthesis phase: wait for enrichment, build beliefs per tenant, then read the derived
layers (facts, beliefs, conflicts) where the engine allows. Each step returns what it did; the
scenario records it as it goes, so a failure in a later step keeps the earlier ones."""

from __future__ import annotations

import time
from collections import Counter

from memeval.engines.base import BuildsBeliefs, HasBacklog, Inspects
from memeval.errors import Unsupported
from memeval.record import Builds, Enrichment, TenantDerived, TimingLabel
from memeval.runner.context import ScenarioContext
from memeval.runner.waits import drain


def wait_for_enrichment(ctx: ScenarioContext) -> Enrichment:
    """Wait up to ``enrich_wait_s``: until the backlog drains where the engine reports one,
    else the whole time."""
    wait = ctx.enrich_wait_s
    if wait <= 0:
        return Enrichment(waited=False)
    start = time.perf_counter()
    if "backlog" in ctx.capabilities and isinstance(ctx.engine, HasBacklog):
        result = drain(ctx.engine, wait, ctx.enrich_poll_s)
        ctx.timings.add(TimingLabel.DRAIN, ms := (time.perf_counter() - start) * 1000)
        return Enrichment(waited=True, ms=round(ms, 3), drained=result["drained"],
                          polls=result["polls"], pending=result["pending"])
    time.sleep(wait)
    ctx.timings.add(TimingLabel.FIXED_WAIT, ms := (time.perf_counter() - start) * 1000)
    return Enrichment(waited=True, ms=round(ms, 3), fixed_wait_s=wait)


def build_beliefs(ctx: ScenarioContext) -> Builds:
    """Build beliefs in every tenant (engines with the capability; none built, and nothing
    timed, otherwise)."""
    start = time.perf_counter()
    outcomes: Counter[str] = Counter()
    counts: list[int | None] = []
    engine = ctx.engine
    builder = engine if "beliefs" in ctx.capabilities and isinstance(engine, BuildsBeliefs) else None
    if builder is not None:
        for ns in ctx.namespaces.values():
            receipt = builder.build_beliefs(ns)
            outcomes[receipt.outcome] += 1
            counts.append(receipt.built)
    ms = (time.perf_counter() - start) * 1000
    if builder is not None:  # a build never made has no latency
        ctx.timings.add(TimingLabel.BUILDS, ms)
    built = None if not counts or None in counts else sum(c for c in counts if c is not None)  # unknown when any build gave no count
    return Builds(outcomes=dict(outcomes), built=built, ms=round(ms, 3))


def inspect_derived(ctx: ScenarioContext) -> dict[str, TenantDerived]:
    """Per scenario tenant, the facts, beliefs and (with the capability) conflicts the engine holds."""
    engine = ctx.engine
    if not isinstance(engine, Inspects):
        raise Unsupported("the engine cannot be inspected")
    out = {}
    for tenant, ns in ctx.namespaces.items():
        derived = engine.inspect(ns)
        out[tenant] = TenantDerived(
            facts=tuple(f.line() for f in derived.facts), beliefs=tuple(b.line() for b in derived.beliefs),
            conflicts=tuple(c.line() for c in derived.conflicts) if "conflicts" in ctx.capabilities else None,
            stances=dict(Counter(b.stance for b in derived.beliefs)),
            confidences=tuple(b.confidence for b in derived.beliefs if b.confidence is not None),
        )
    return out


def derived_lines(derived: dict[str, TenantDerived]) -> dict[str, list[str]]:
    """Per tenant, its fact then belief lines: what a probe's ``captured`` is graded against."""
    return {tenant: [*d.facts, *d.beliefs] for tenant, d in derived.items()}
