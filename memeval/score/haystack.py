"""How much of its haystack each probe's pack held: the context-stuffing check.

A probe's *haystack* is everything the suite wrote to its agent's tenant in its scenario
(documents, learnings, thread turns, replies and tool results), counted in tokens as the pack
budget counts them (characters / 4), recorded on each probe when it runs
(:func:`with_haystacks`; an older record's is read off the resolved spec it carries). Its share
is pack tokens / haystack tokens, at most 1 (a pack's headings can make it larger than a tiny
haystack). When the packs hold on average more than the suite's
``stuffing_threshold`` (default :data:`THRESHOLD`) of their haystacks, retrieval did no work:
the run is flagged "not a retrieval test" in every report.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from memeval.record import ProbeResult
from memeval.record.run import Stuffing
from memeval.record.setup import RetrievalSetup
from memeval.spec.model import Scenario

THRESHOLD = 0.5
"""Default share of the haystack above which a run is not a retrieval test."""
CHARS_PER_TOKEN = 4


Key = tuple[str, str]
"""(scenario id, probe id)."""


def haystacks(resolved: Mapping[str, Any]) -> dict[Key, int]:
    """Tokens written per (scenario id, probe id): the probe's agent's tenant's haystack."""
    return {key: tokens for key, (tokens, _) in _written(resolved).items()}


def _written(resolved: Mapping[str, Any]) -> dict[Key, tuple[int, int]]:
    """Per probe of the resolved spec's scenarios: its haystack's tokens and items."""
    return {(str(scn.get("scenario")), pid): size for scn in _list(resolved.get("scenarios"))
            for pid, size in _scenario_sizes(scn).items()}


def _scenario_sizes(scn: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    """Per probe id of one scenario (a spec mapping, or a typed scenario as a dict): tokens and
    items (documents, learnings, turns) written to the probe's agent's tenant."""
    tenant_of = {str(a.get("id")): str(a.get("tenant")) for a in _list(scn.get("agents"))}
    sizes: dict[str, tuple[int, int]] = {}

    def add(tenant: str, chars: int, items: int) -> None:
        had = sizes.get(tenant, (0, 0))
        sizes[tenant] = (had[0] + chars, had[1] + items)

    for item in (*_list(scn.get("documents")), *_list(scn.get("learnings"))):
        add(str(item.get("tenant")), len(str(item.get("text", ""))), 1)
    for thread in _list(scn.get("threads")):
        exchanges = _list(thread.get("exchanges"))
        add(tenant_of.get(str(thread.get("agent")), ""), sum(_turn_chars(x) for x in exchanges), 2 * len(exchanges))
    out = {}
    for probe in _list(scn.get("probes")):
        chars, items = sizes.get(tenant_of.get(str(probe.get("agent")), ""), (0, 0))
        out[str(probe.get("id"))] = (chars // CHARS_PER_TOKEN, items)
    return out


def with_haystacks(scenario: Scenario, probes: Sequence[ProbeResult]) -> tuple[ProbeResult, ...]:
    """``probes`` of ``scenario`` with their haystack's tokens and items recorded, so that a run
    whose scenarios are not in its resolved spec (a dataset streamed at run time) is measured too."""
    sizes = _scenario_sizes(dataclasses.asdict(scenario))
    return tuple(replace(p, haystack_tokens=sizes[p.id][0], haystack_items=sizes[p.id][1]) if p.id in sizes else p
                 for p in probes)


def sizes_of(probes: Sequence[ProbeResult], resolved: Mapping[str, Any]) -> dict[Key, tuple[int, int]]:
    """Each probe's haystack (tokens, items): as the probes recorded it, else (a record written
    before probes kept it) read off the resolved spec."""
    kept = {(p.scenario, p.id): (p.haystack_tokens, p.haystack_items or 0) for p in probes
            if p.haystack_tokens is not None}
    return kept if kept else _written(resolved)


def depth(probes: Sequence[ProbeResult], resolved: Mapping[str, Any], budget_tokens: int,
          pack_items: int) -> RetrievalSetup | None:
    """The retrieval depth the suite allows relative to its haystacks: the pack's budget and item
    limit beside the mean tokens and items stored per probe (None when no probe has a haystack)."""
    sizes = [v for v in sizes_of(probes, resolved).values() if v[0]]
    if not sizes:
        return None
    tokens = sum(t for t, _ in sizes) / len(sizes)
    items = sum(i for _, i in sizes) / len(sizes)
    return RetrievalSetup(budget_tokens, pack_items, round(tokens, 1), round(items, 1),
                          round(min(1.0, budget_tokens / tokens), 4),
                          round(min(1.0, pack_items / items), 4) if items else None)


def stuffing(probes: Sequence[ProbeResult], resolved: Mapping[str, Any]) -> Stuffing | None:
    """The run's stuffing check over its scored probes with a pack and a non-empty haystack
    (None when there is none): the token share, and the mean tokens and items retrieved (in the
    pack) and stored per probe."""
    sizes = sizes_of(probes, resolved)
    counted = [(p, p.tokens, sizes[(p.scenario, p.id)]) for p in probes
               if p.scored and p.tokens is not None and sizes.get((p.scenario, p.id), (0, 0))[0]]
    if not counted:
        return None
    shares = [min(1.0, tokens / stored) for _, tokens, (stored, _) in counted]
    threshold = float(resolved.get("stuffing_threshold", THRESHOLD))
    mean, n = sum(shares) / len(shares), len(counted)
    units = [p.units for p, _, _ in counted if p.units is not None]
    return Stuffing(threshold, n, round(mean, 4), round(max(shares), 4), sum(1 for s in shares if s > threshold),
                    mean > threshold,
                    tokens_retrieved=round(sum(tokens for _, tokens, _ in counted) / n, 1),
                    tokens_stored=round(sum(stored for _, _, (stored, _) in counted) / n, 1),
                    items_retrieved=round(sum(units) / len(units), 1) if units else None,
                    items_stored=round(sum(items for _, _, (_, items) in counted) / n, 1))


def _turn_chars(exchange: Any) -> int:
    if not isinstance(exchange, Mapping):
        return 0
    tools = sum(len(str(t.get("result") or "")) for t in _list(exchange.get("tools")))
    return len(str(exchange.get("user") or "")) + len(str(exchange.get("reply") or "")) + tools  # a scripted reply is None


def _list(value: Any) -> list[Any]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, (list, tuple)) else []
