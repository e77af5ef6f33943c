"""mem0 in-process (:mod:`.adapter`; its records in :mod:`.records`). The ``memeval.engines``
entry point ``mem0`` is ``memeval.engines.mem0:ADAPTER``; the ``mem0ai`` library itself is
imported only when an engine is created."""

from __future__ import annotations

from memeval.engines.mem0.adapter import ADAPTER

__all__ = ["ADAPTER"]
