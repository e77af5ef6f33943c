"""Configuration of the fake CortexDB: keys, timings, capabilities and the CortexDB flags.

Flags are the server's ``CORTEX_*`` environment variables (except ``CORTEX_API_KEY``), read
once at start and reported by ``GET v1/admin/version`` as ``flags``, so a sweep can check
which profile a server runs. Three of them change behaviour:

- ``CORTEX_BITEMPORAL_MODE`` (``off`` | ``shadow`` | ``enforce``, default ``shadow``): see
  :mod:`memeval.servers.fake_cortex.beliefs`;
- ``CORTEX_SALIENCE_WEIGHT`` (default 0.10): above 0.2 newer events get a small recall boost;
- ``CORTEX_ENRICHMENT_SCOPE_QUIET_MS`` (default 0): enrichment of an event waits that long.

The others are only reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_API_KEY = "tinymemory-cortex-test"
DEFAULT_HOSTED_KEY = "tiny_live_test"
VERSION = "v0.10.5-fake"
CAPABILITIES = ("refers_to_v1", "temporal_lenient_v1")
BITEMPORAL_MODES = ("off", "shadow", "enforce")
WIRES = ("0.10", "0.12")
"""Recall wires: ``0.10`` (CortexDB v0.10.x, the default, what recorded runs talked to) or
``0.12`` (what the ``cortexdbai`` 0.12 SDK and ``cortexdb-mcp`` 0.8 send: a recall may carry
``diagnostics``, and its pack carries a rendered ``context_block``)."""


def flags_from_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The CortexDB flag variables in ``environ``: every ``CORTEX_*`` but the server's key
    (``CORTEX_API_KEY``) and the client's own settings (``CORTEX_DB_URL``, ``CORTEX_DB_KEY``, …),
    which configure memeval, not the server."""
    return {k: v for k, v in sorted(environ.items())
            if k.startswith("CORTEX_") and k != "CORTEX_API_KEY" and not k.startswith("CORTEX_DB_")}


@dataclass(frozen=True)
class FailRule:
    """Answer the next ``count`` requests whose path starts with ``route`` with ``status``.

    ``route`` has no leading ``/`` (``v1/recall``, ``memory/``); ``""`` matches every route.
    ``retry_after`` (seconds) becomes a ``Retry-After`` header when set.
    """

    route: str
    status: int
    count: int = 1
    error_code: str = ""
    retry_after: float | None = None


@dataclass(frozen=True)
class ResetRule:
    """Close the connection without a response for the next ``count`` requests under ``route``."""

    route: str
    count: int = 1


GARBLE_MODES = ("truncated", "html", "shape", "trickle", "hang")


@dataclass(frozen=True)
class GarbleRule:
    """Spoil the answer of the next ``count`` requests under ``route`` (the request itself is
    served, except by ``hang``): ``truncated`` (the JSON cut in half), ``html`` (a ``text/html`` page with status
    200), ``shape`` (a JSON list where an object belongs), ``trickle`` (the whole response one
    byte a second) or ``hang`` (the request is not served and no byte is sent, the connection held
    open)."""

    route: str
    mode: str
    count: int = 1


@dataclass(frozen=True)
class FaultSettings:
    """Fault knobs a server starts with; all can be changed later via ``POST v1/_fake/faults``.

    ``hide_listings``: events never become visible (listing, recall, ``?wait=indexed``).
    ``expire_packs``: every pack is already expired when an answer asks for it.
    ``storm_every``: every K-th request is answered 429 (0 = off).
    """

    fail: tuple[FailRule, ...] = ()
    reset: tuple[ResetRule, ...] = ()
    hide_listings: bool = False
    expire_packs: bool = False
    storm_every: int = 0


@dataclass(frozen=True)
class FakeCortexConfig:
    """Everything a fake CortexDB server needs. Durations are seconds.

    ``index_delay``: from accepted (202) to visible in listing and recall.
    ``wait_cap``: longest ``?wait=indexed`` wait before ``408 WAIT_TIMEOUT``.
    ``pack_ttl``: life of a recall pack. ``enrich_delay``: time per enrichment job.
    ``tenant``: hosted mode re-roots every scope under ``org:<tenant>/``.
    ``hosted_rate_limit``: hosted requests per minute per key before 429 (0 = no limit).
    ``data_file``: JSON state file, written after each mutation and read at start.
    ``latency``, ``jitter``: each request but the control route waits ``latency`` plus or minus
    up to ``jitter`` (uniform, seeded) before it is answered, as a remote server would.
    """

    api_key: str = DEFAULT_API_KEY
    hosted: bool = False
    hosted_api_key: str = DEFAULT_HOSTED_KEY
    tenant: str = "local"
    hosted_rate_limit: int = 300
    index_delay: float = 0.3
    wait_cap: float = 5.0
    pack_ttl: float = 60.0
    enrich_delay: float = 0.05
    latency: float = 0.0
    jitter: float = 0.0
    capabilities: tuple[str, ...] = CAPABILITIES
    flags: Mapping[str, str] = field(default_factory=dict)
    data_file: Path | None = None
    faults: FaultSettings = FaultSettings()
    wire: str = "0.10"

    def __post_init__(self) -> None:
        """Raises ValueError when a behaviour flag has an unusable value."""
        if self.wire not in WIRES:
            raise ValueError(f"the wire must be one of {', '.join(WIRES)}, not {self.wire!r}")
        if self.bitemporal_mode not in BITEMPORAL_MODES:
            raise ValueError(f"CORTEX_BITEMPORAL_MODE must be one of {', '.join(BITEMPORAL_MODES)}")
        for name in ("CORTEX_SALIENCE_WEIGHT", "CORTEX_ENRICHMENT_SCOPE_QUIET_MS"):
            try:
                float(self.flags.get(name) or 0)
            except ValueError:
                raise ValueError(f"{name} must be a number, not {self.flags[name]!r}") from None

    @property
    def bitemporal_mode(self) -> str:
        """``CORTEX_BITEMPORAL_MODE``, default ``shadow``."""
        return self.flags.get("CORTEX_BITEMPORAL_MODE", "shadow").strip().lower() or "shadow"

    @property
    def salience_weight(self) -> float:
        """``CORTEX_SALIENCE_WEIGHT``, default 0.10. Raises ValueError when not a number."""
        return float(self.flags.get("CORTEX_SALIENCE_WEIGHT") or 0.10)

    @property
    def enrichment_quiet(self) -> float:
        """``CORTEX_ENRICHMENT_SCOPE_QUIET_MS`` in seconds, default 0."""
        return float(self.flags.get("CORTEX_ENRICHMENT_SCOPE_QUIET_MS") or 0) / 1000.0
