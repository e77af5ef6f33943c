"""The parts every fake CortexDB route works with: configuration, state and fault knobs."""

from __future__ import annotations

import time
from dataclasses import dataclass

from memeval.servers.fake_cortex.config import FakeCortexConfig
from memeval.servers.fake_cortex.faults import Faults
from memeval.servers.fake_cortex.store import Event, Store


@dataclass(frozen=True)
class Core:
    """One server's configuration, store and faults."""

    config: FakeCortexConfig
    store: Store
    faults: Faults

    @staticmethod
    def now() -> float:
        """Wall-clock seconds since the epoch (visibility and pack times are persisted)."""
        return time.time()

    def visible(self, event: Event, now: float) -> bool:
        """Whether ``event`` is readable at ``now``: indexed and listings not hidden."""
        return not self.faults.hide_listings and event.visible_at <= now
