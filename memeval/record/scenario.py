"""One scenario's result: how it ended, what it wrote, what synthesis did, and its cleanup."""

from __future__ import annotations

from dataclasses import dataclass, field

from memeval.record.codec import flat, omitted
from memeval.record.values import ScenarioStatus


@dataclass(frozen=True)
class Usage:
    """The engine's own model usage over a span (a scenario, or the run)."""

    calls: int
    """Model calls the engine made."""
    tokens: int
    """Tokens those calls used."""
    cost_usd: float | None
    """Their cost in USD (None: the engine does not know it)."""
    by_role: dict[str, float]
    """USD per model role (e.g. enrich, embed)."""


@dataclass(frozen=True)
class Enrichment:
    """The wait for the engine's enrichment before beliefs were built."""

    waited: bool
    """Whether the run waited at all (``enrich_wait_s`` > 0)."""
    ms: float | None = omitted(default=None)
    """How long it waited, ms."""
    drained: bool | None = omitted(default=None)
    """The engine's queue emptied within the wait (engines with a backlog)."""
    polls: int | None = omitted(default=None)
    """How often the backlog was read."""
    pending: int | None = omitted(default=None)
    """Jobs still queued when the wait ended."""
    fixed_wait_s: float | None = omitted(default=None)
    """Seconds slept, for an engine that cannot report its backlog."""


@dataclass(frozen=True)
class Builds:
    """The belief builds of the synthesis phase, one per tenant."""

    outcomes: dict[str, int]
    """Builds per outcome the engine reported (e.g. done, noop)."""
    built: int | None
    """Beliefs built over all tenants (None: some build gave no count)."""
    ms: float
    """Wall time of all builds, ms."""


@dataclass(frozen=True)
class TenantDerived:
    """What the engine derived for one tenant, read after synthesis (engines that can be inspected)."""

    facts: tuple[str, ...]
    """Each fact as one line."""
    beliefs: tuple[str, ...]
    """Each belief as one line."""
    conflicts: tuple[str, ...] | None
    """Each conflict raised as one line (None: the engine cannot list conflicts)."""
    stances: dict[str, int]
    """Beliefs per stance (supported, contested, …)."""
    confidences: tuple[float, ...]
    """Every belief confidence the engine gave (0-1)."""


@dataclass(frozen=True)
class Synthesis:
    """The settle and synthesis steps of a scenario; a step that never ran leaves its keys out."""

    settle_ms: float | None = omitted(default=None)
    """Time until every write was listed, ms."""
    enrichment: Enrichment | None = omitted(default=None)
    """The enrichment wait."""
    builds: Builds | None = flat(default=None)
    """The belief builds (``outcomes``, ``built``, ``ms``)."""
    derived: dict[str, TenantDerived] | None = omitted(default=None)
    """Per scenario tenant, what the engine derived (engines that can be inspected)."""


@dataclass(frozen=True)
class Cleanup:
    """Whether what the scenario wrote was forgotten afterwards."""

    forgotten: bool
    """Everything written was removed."""
    reason: str | None
    """Why not (``--keep``, unsupported, a failed call); None when forgotten."""


@dataclass(frozen=True)
class ScenarioResult:
    """One scenario run on the engine."""

    id: str
    """The scenario id."""
    about: str
    """The spec's one-line description."""
    status: ScenarioStatus
    """How it ended."""
    error: str | None
    """The engine failure that ended it (one line); None when ok."""
    tenants: dict[str, str]
    """Scenario tenant to the engine namespace it ran under (unique per run)."""
    writes: int
    """Items written."""
    tool_calls: int
    """Tool calls replayed in the exchanges."""
    synthesis: Synthesis
    """Settle, enrichment, builds and derived layers."""
    cleanup: Cleanup
    """Whether its writes were forgotten."""
    ms: float
    """Wall time of the scenario, ms."""
    usage: Usage | None = field(default=None)
    """The engine's model usage during the scenario (None: unknown or none)."""

    @property
    def ok(self) -> bool:
        """Whether the scenario finished without an engine failure."""
        return self.status == "ok"
