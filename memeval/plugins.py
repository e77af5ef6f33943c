"""Extension points found through entry points: one lookup for every group.

A group (``memeval.engines``, ``memeval.benchmarks``) maps names to ``package.module:OBJECT``
strings in the installed distributions' metadata; memeval's own extensions register the same
way in its ``pyproject.toml``. An entry point is imported only when it is asked for, so a
missing optional dependency only matters to the runs that need it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from importlib.metadata import EntryPoint, entry_points

from memeval.errors import UsageError
from memeval.util.suggest import did_you_mean

BENCHMARKS = "memeval.benchmarks"
"""The group of published benchmarks (:mod:`memeval.benchmarks`)."""


def installed(group: str) -> dict[str, EntryPoint]:
    """The entry points of ``group`` by name."""
    return {ep.name: ep for ep in entry_points(group=group)}


def load(found: Mapping[str, EntryPoint], name: str, what: str, kind: type, kind_name: str) -> object:
    """The object entry point ``name`` of ``found`` (a group's :func:`installed` entry points)
    names, checked to be a ``kind``.

    ``what`` names the extension in messages (``benchmark``), ``kind_name`` the expected type.

    Raises:
        UsageError: nothing of that name is installed (``unknown WHAT 'x' (did you mean …?)``),
            its module cannot be imported (the message carries the import error), or it names
            something other than a ``kind``.
    """
    if name not in found:
        raise UsageError(f"unknown {what} {name!r}{did_you_mean(name, found)}; installed: {', '.join(sorted(found))}")
    try:
        value = found[name].load()
    except ImportError as err:
        raise UsageError(f"{what} {name!r} cannot load: {err}") from err
    if not isinstance(value, kind):
        raise UsageError(f"{what} {name!r}: entry point {found[name].value} names a "
                         f"{type(value).__name__}, not a {kind_name}")
    return value


@lru_cache(maxsize=None)
def find(group: str, name: str) -> object | None:
    """The object entry point ``name`` of ``group`` names, or None when there is none or it
    cannot be imported. For readers of a record, who ask a benchmark for a fact (its cluster
    unit, its abstention policy) through a protocol of their own and fall back when it is
    missing; loading and checking with errors is :func:`load`."""
    found = installed(group).get(name)
    if found is None:
        return None
    try:
        value: object = found.load()
    except ImportError:
        return None
    return value
