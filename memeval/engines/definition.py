"""The engine definition value: which adapter, its settings and optionally its server.

Definitions are spec data: :mod:`memeval.spec.engine_def` reads, validates and finds them; this
module only holds the resolved value, so the engines package never imports the spec loader.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memeval.engines import create_engine
from memeval.engines.base import Engine


@dataclass(frozen=True)
class EngineDef:
    """A resolved engine definition. ``file`` is None for a bare adapter name."""

    name: str
    adapter: str
    settings: dict[str, Any] = field(default_factory=dict)
    enrich_wait_s: float | None = None
    server: dict[str, Any] | None = None
    file: str | None = None

    def create(self, overrides: dict[str, Any] | None = None) -> Engine:
        """Build the engine, with ``overrides`` on top of the YAML settings (e.g. a started server's URL)."""
        return create_engine(self.adapter, {**self.settings, **(overrides or {})})
