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

THRESHOLD = 0.5
"""Default share of the haystack above which a run is not a retrieval test."""
CHARS_PER_TOKEN = 4


def haystacks(resolved: Mapping[str, Any]) -> dict[tuple[str, str], int]:
    """Tokens written per (scenario id, probe id): the probe's agent's tenant's haystack."""
    out: dict[tuple[str, str], int] = {}
    for scn in _list(resolved.get("scenarios")):
        tenant_of = {str(a.get("id")): str(a.get("tenant")) for a in _list(scn.get("agents"))}
        chars: dict[str, int] = {}
        for item in (*_list(scn.get("documents")), *_list(scn.get("learnings"))):
            chars[str(item.get("tenant"))] = chars.get(str(item.get("tenant")), 0) + len(str(item.get("text", "")))
        for thread in _list(scn.get("threads")):
            tenant = tenant_of.get(str(thread.get("agent")), "")
            chars[tenant] = chars.get(tenant, 0) + sum(_turn_chars(x) for x in _list(thread.get("exchanges")))
        for probe in _list(scn.get("probes")):
            tenant = tenant_of.get(str(probe.get("agent")), "")
            out[(str(scn.get("scenario")), str(probe.get("id")))] = chars.get(tenant, 0) // CHARS_PER_TOKEN
    return out


def stuffing(probes: Sequence[ProbeResult], resolved: Mapping[str, Any]) -> Stuffing | None:
    """The run's stuffing check over its scored probes with a pack and a non-empty haystack
    (None when there is none, e.g. a record without its spec)."""
    sizes = haystacks(resolved)
    shares = [min(1.0, p.tokens / sizes[(p.scenario, p.id)]) for p in probes
              if p.scored and p.tokens is not None and sizes.get((p.scenario, p.id))]
    if not shares:
        return None
    threshold = float(resolved.get("stuffing_threshold", THRESHOLD))
    mean = sum(shares) / len(shares)
    return Stuffing(threshold, len(shares), round(mean, 4), round(max(shares), 4),
                    sum(1 for s in shares if s > threshold), mean > threshold)


def _turn_chars(exchange: Any) -> int:
    if not isinstance(exchange, Mapping):
        return 0
    tools = sum(len(str(t.get("result", ""))) for t in _list(exchange.get("tools")))
    return len(str(exchange.get("user", ""))) + len(str(exchange.get("reply", ""))) + tools


def _list(value: Any) -> list[Any]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []
