"""Engine adapters, found through the ``memeval.engines`` entry-point group.

Each entry point names a factory ``create(settings: Mapping[str, Any]) -> Engine``. The built-in
adapters register the same way in memeval's own ``pyproject.toml``; a factory is imported only
when a run asks for it, so a missing optional dependency only matters to the runs that need it.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import Any, Mapping

from memeval.engines.base import Engine
from memeval.errors import UsageError
from memeval.suggest import did_you_mean

GROUP = "memeval.engines"


def adapters() -> dict[str, EntryPoint]:
    """Installed adapters by name."""
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def create_engine(adapter: str, settings: Mapping[str, Any]) -> Engine:
    """Build an engine from its adapter name and settings.

    Raises:
        UsageError: no adapter of that name is installed, or its module cannot be imported
            (the message carries the import error, e.g. the missing module).
    """
    found = adapters()
    if adapter not in found:
        hint = did_you_mean(adapter, found)
        raise UsageError(f"unknown engine adapter {adapter!r}{hint}; installed: {', '.join(sorted(found))}")
    try:
        factory = found[adapter].load()
    except ImportError as err:
        raise UsageError(f"engine adapter {adapter!r} cannot load: {err}") from err
    return factory(dict(settings))
