"""Engine adapters, found through the ``memeval.engines`` entry-point group.

Each entry point names an :class:`~memeval.engines.base.Adapter` (``package.module:ADAPTER``):
its factory and, for an engine behind a server, its URL variable. The built-in adapters register
the same way in memeval's own ``pyproject.toml``; an adapter module is imported only when a run
asks for it, so a missing optional dependency only matters to the runs that need it.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint
from typing import Any, Mapping, cast

from memeval.engines.base import Adapter, Engine, missing_core
from memeval.errors import UsageError
from memeval.plugins import installed, load

GROUP = "memeval.engines"


def adapters() -> dict[str, EntryPoint]:
    """Installed adapters by name."""
    return installed(GROUP)


def load_adapter(name: str) -> Adapter:
    """The installed adapter ``name``.

    Raises:
        UsageError: no adapter of that name is installed, its module cannot be imported (the
            message carries the import error, e.g. the missing module), or its entry point
            names something other than an :class:`Adapter`.
    """
    return cast(Adapter, load(adapters(), name, "engine adapter", Adapter, "memeval.engines.base.Adapter"))


def create_engine(adapter: str, settings: Mapping[str, Any]) -> Engine:
    """Build an engine from its adapter name and settings.

    Raises:
        UsageError: what :func:`load_adapter` raises, what the factory raises for bad settings,
            or the factory built something that lacks a method of the core :class:`Engine`.
    """
    engine = load_adapter(adapter).create(dict(settings))
    missing = missing_core(engine)
    if missing:
        raise UsageError(f"engine adapter {adapter!r} built a {type(engine).__name__} without {', '.join(missing)}: "
                         "not a memeval Engine")
    return engine
