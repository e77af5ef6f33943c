"""What the engine lacked that the run would have used: per missing capability, the probe
results it made unsupported and the KPIs it left unmeasured (run.json ``engine_unsupported``).

A capability the engine declares is never listed; one it lacks is listed even when it cost
nothing (0 probes, no KPI), so a reader sees what was not tried. Capabilities decide which KPIs
exist: :func:`mark_unsupported` turns every KPI of a missing capability into an unsupported one
(value None, ``unsupported`` naming the capability), whatever the run happened to time or count
(an engine without beliefs holds 0 beliefs and "builds" them in no time; neither is a number).
"""

from __future__ import annotations

from collections.abc import Sequence

from dataclasses import replace

from memeval.record import Kpi, MissingCapability, ProbeResult

USED: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # capability: (words of an unsupported probe's reason that name it, KPIs it feeds)
    "forget": (("cannot forget",), ()),
    "beliefs": ((), ("beliefs built", "beliefs held", "beliefs not supported", "belief confidence", "belief builds")),
    "inspect": (("cannot be inspected",), ("captured", "lesson captured", "beliefs held", "beliefs not supported",
                                           "facts held", "belief confidence")),
    "conflicts": ((), ("planted conflicts flagged", "spurious conflicts", "conflicts raised")),
    "usage": ((), ("engine models $", "engine model calls", "engine model tokens")),
    "backlog": ((), ("enrichment drain",)),
}
"""The capabilities a run uses beyond the core protocol."""


def missing_for(name: str, capabilities: Sequence[str]) -> str | None:
    """The first capability of :data:`USED` that KPI ``name`` needs and ``capabilities`` lacks."""
    return next((cap for cap, (_, fed) in USED.items() if name in fed and cap not in capabilities), None)


def mark_unsupported(kpis: Sequence[Kpi], capabilities: Sequence[str]) -> tuple[Kpi, ...]:
    """``kpis`` with every KPI a missing capability feeds made unsupported (value, n and
    intervals cleared, ``unsupported`` naming the capability)."""
    out = []
    for k in kpis:
        cap = missing_for(k.name, capabilities)
        out.append(k if cap is None else replace(k, value=None, n=0, ci95=None, clustered=None, unsupported=cap))
    return tuple(out)


def engine_unsupported(capabilities: Sequence[str], probes: Sequence[ProbeResult],
                       kpis: Sequence[Kpi]) -> tuple[MissingCapability, ...]:
    """One entry per capability of :data:`USED` not in ``capabilities``, in that order."""
    null = {k.name for k in kpis if k.value is None}
    out = []
    for capability, (reasons, fed) in USED.items():
        if capability in capabilities:
            continue
        count = sum(1 for p in probes if p.status == "unsupported" and any(r in (p.reason or "") for r in reasons))
        out.append(MissingCapability(capability, count, tuple(k for k in fed if k in null)))
    return tuple(out)
