"""What the engine lacked that the run would have used: per missing capability, the probe
results it made unsupported and the KPIs it left unmeasured (run.json ``engine_unsupported``).

A capability the engine declares is never listed; one it lacks is listed even when it cost
nothing (0 probes, no KPI), so a reader sees what was not tried.
"""

from __future__ import annotations

from collections.abc import Sequence

from memeval.record import Kpi, MissingCapability, ProbeResult

USED: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # capability: (words of an unsupported probe's reason that name it, KPIs it feeds)
    "forget": (("cannot forget",), ()),
    "beliefs": ((), ("beliefs built",)),
    "inspect": (("cannot be inspected",), ("captured", "lesson captured", "beliefs held", "beliefs not supported",
                                           "facts held", "belief confidence")),
    "conflicts": ((), ("planted conflicts flagged", "spurious conflicts", "conflicts raised")),
    "usage": ((), ("engine models $", "engine model calls", "engine model tokens")),
    "backlog": ((), ("enrichment drain",)),
}
"""The capabilities a run uses beyond the core protocol."""


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
