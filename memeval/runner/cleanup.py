"""Removing everything a run wrote in one engine tenant (tenants are run-unique, so all of it is
the run's)."""

from __future__ import annotations

from collections.abc import Iterable

from memeval.engines.base import Engine, Erases
from memeval.errors import Unsupported

BATCH = 100


def clear_tenant(engine: Engine, capabilities: frozenset[str], ns: str, known: Iterable[str] = ()) -> None:
    """Erase ``ns``, or, on an engine that can only forget, forget the ``known`` ids and then
    whatever the listing still shows (a write whose receipt was lost).

    Raises:
        Unsupported: the engine can neither erase nor forget.
        EngineError: the engine failed.
    """
    if "erase" in capabilities and isinstance(engine, Erases):
        engine.erase(ns)
        return
    if "forget" not in capabilities:
        raise Unsupported("the engine cannot forget; data left in place")
    ordered = sorted(known)
    for i in range(0, len(ordered), BATCH):
        engine.forget(ns, tuple(ordered[i:i + BATCH]))
    left: tuple[str, ...] = ()
    while True:
        page = tuple(item.id for item in engine.page(ns, None, BATCH).items)
        if not page or page == left:  # nothing left, or nothing more this engine will forget
            return
        engine.forget(ns, page)
        left = page
