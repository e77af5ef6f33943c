"""memeval: declarative evaluation of AI-agent memory.

The library surface (see :mod:`memeval.api`), loaded on first use so that ``import memeval``
and the command line stay fast::

    import memeval
    record = memeval.run("specs/agent-memory.yaml", engine="reference")

- suites: :func:`load_suite`, :class:`Suite`;
- runs: :func:`run` (returns a :class:`RunRecord`), :func:`read_run`, :func:`publish`;
- comparing: :func:`compare`, :func:`render_comparison`;
- adapter authors: the :class:`Engine` protocol and its capability protocols, :class:`Adapter`,
  :class:`Capability`, :func:`capabilities_of`, the values engines trade in
  (:class:`MemoryItem`, :class:`RecallRequest`, :class:`Hit`, :class:`ListPage`, …) and the
  conformance kit (:func:`run_checks`);
- errors: :class:`MemevalError` and its subclasses.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "run": "memeval.api", "compare": "memeval.api",
    "load_suite": "memeval.spec.load", "Suite": "memeval.spec.model",
    "RunRecord": "memeval.record", "ProbeResult": "memeval.record", "ScenarioResult": "memeval.record",
    "read_run": "memeval.report.files", "publish": "memeval.report.publish",
    "render_comparison": "memeval.comparison",
    "Engine": "memeval.engines.base", "Adapter": "memeval.engines.base", "Capability": "memeval.engines.base",
    "capabilities_of": "memeval.engines.base", "Erases": "memeval.engines.base", "Answers": "memeval.engines.base",
    "BuildsBeliefs": "memeval.engines.base", "Inspects": "memeval.engines.base",
    "ReportsUsage": "memeval.engines.base", "HasBacklog": "memeval.engines.base",
    "ReportsConflicts": "memeval.engines.base", "MemoryItem": "memeval.engines.base",
    "RecallRequest": "memeval.engines.base", "Hit": "memeval.engines.base", "ListPage": "memeval.engines.base",
    "WriteReceipt": "memeval.engines.base", "EngineInfo": "memeval.engines.base",
    "run_checks": "memeval.engines.conformance",
    "MemevalError": "memeval.errors", "SpecError": "memeval.errors", "UsageError": "memeval.errors",
    "EngineError": "memeval.errors",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    """Import an exported name's module when the name is first used (PEP 562)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'memeval' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value
