"""How much of its haystack each probe's pack held: the context-stuffing check.

A probe's *haystack* is everything the suite wrote to its agent's tenant in its scenario
(documents, learnings, thread turns, replies and tool results), counted in tokens as the pack
budget counts them (characters / 4), read off the resolved spec the record carries. Its share
is pack tokens / haystack tokens, at most 1 (a pack's headings can make it larger than a tiny
haystack). When the packs hold on average more than the suite's
``stuffing_threshold`` (default :data:`THRESHOLD`) of their haystacks, retrieval did no work:
the run is flagged "not a retrieval test" in every report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memeval.record import ProbeResult
from memeval.record.run import Stuffing
from memeval.record.setup import RetrievalSetup

THRESHOLD = 0.5
"""Default share of the haystack above which a run is not a retrieval test."""
CHARS_PER_TOKEN = 4


def haystacks(resolved: Mapping[str, Any]) -> dict[tuple[str, str], int]:
    """Tokens written per (scenario id, probe id): the probe's agent's tenant's haystack."""
    return {key: chars // CHARS_PER_TOKEN for key, (chars, _) in _written(resolved).items()}


def _written(resolved: Mapping[str, Any]) -> dict[tuple[str, str], tuple[int, int]]:
    """Per (scenario id, probe id): characters and items (documents, learnings, turns) written
    to the probe's agent's tenant."""
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for scn in _list(resolved.get("scenarios")):
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
        for probe in _list(scn.get("probes")):
            out[(str(scn.get("scenario")), str(probe.get("id")))] = sizes.get(tenant_of.get(str(probe.get("agent")), ""),
                                                                            (0, 0))
    return out


def depth(resolved: Mapping[str, Any], budget_tokens: int, pack_items: int) -> RetrievalSetup | None:
    """The retrieval depth the suite allows relative to its haystacks: the pack's budget and item
    limit beside the mean tokens and items stored per probe (None when the resolved spec holds
    no probe with a haystack, e.g. a dataset streamed at run time)."""
    sizes = [v for v in _written(resolved).values() if v[0]]
    if not sizes:
        return None
    tokens = sum(c // CHARS_PER_TOKEN for c, _ in sizes) / len(sizes)
    items = sum(i for _, i in sizes) / len(sizes)
    return RetrievalSetup(budget_tokens, pack_items, round(tokens, 1), round(items, 1),
                          round(min(1.0, budget_tokens / tokens), 4) if tokens else None,
                          round(min(1.0, pack_items / items), 4) if items else None)


def stuffing(probes: Sequence[ProbeResult], resolved: Mapping[str, Any]) -> Stuffing | None:
    """The run's stuffing check over its scored probes with a pack and a non-empty haystack
    (None when there is none, e.g. a record without its spec): the token share, and the mean
    tokens and items retrieved (in the pack) and stored per probe."""
    sizes = _written(resolved)
    counted = [(p, sizes[(p.scenario, p.id)]) for p in probes
               if p.scored and p.tokens is not None and sizes.get((p.scenario, p.id), (0, 0))[0] // CHARS_PER_TOKEN]
    if not counted:
        return None
    shares = [min(1.0, p.tokens / (chars // CHARS_PER_TOKEN)) for p, (chars, _) in counted if p.tokens is not None]
    threshold = float(resolved.get("stuffing_threshold", THRESHOLD))
    mean = sum(shares) / len(shares)
    n = len(counted)
    units = [p.units for p, _ in counted if p.units is not None]
    return Stuffing(threshold, n, round(mean, 4), round(max(shares), 4), sum(1 for s in shares if s > threshold),
                    mean > threshold,
                    tokens_retrieved=round(sum(p.tokens or 0 for p, _ in counted) / n, 1),
                    tokens_stored=round(sum(c // CHARS_PER_TOKEN for _, (c, _) in counted) / n, 1),
                    items_retrieved=round(sum(units) / len(units), 1) if units else None,
                    items_stored=round(sum(i for _, (_, i) in counted) / n, 1))


def _turn_chars(exchange: Any) -> int:
    if not isinstance(exchange, Mapping):
        return 0
    tools = sum(len(str(t.get("result", ""))) for t in _list(exchange.get("tools")))
    return len(str(exchange.get("user", ""))) + len(str(exchange.get("reply", ""))) + tools


def _list(value: Any) -> list[Any]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []
