"""CortexDB over HTTP (:mod:`.adapter`, its route layout in :mod:`.layout`, tenant scopes in
:mod:`.tenants`) and CortexDB behind the hosted TinyHumans API (:mod:`.tinyhumans`). The
``memeval.engines`` entry point ``cortex`` is ``memeval.engines.cortex:ADAPTER``."""

from __future__ import annotations

from memeval.engines.cortex.adapter import ADAPTER, CortexEngine, create

__all__ = ["ADAPTER", "CortexEngine", "create"]
