"""Published benchmarks, found through the ``memeval.benchmarks`` entry-point group.

Each entry point names an object satisfying :class:`~memeval.benchmarks.base.Benchmark`
(``package.module:BENCHMARK``): its reader, YAML mapping, graders and judge requests,
categories, cluster unit and tables. The built-ins (``memeval/benchmarks/<name>/``) register the
same way in memeval's own ``pyproject.toml``; the core looks a benchmark up by name here and
never branches on one. ``docs/benchmarks-extending.md`` says how to add one.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, cast

from memeval.benchmarks.base import Benchmark
from memeval.errors import UsageError
from memeval.plugins import BENCHMARKS as GROUP
from memeval.plugins import installed, load

AnyBenchmark = Benchmark[Any]


def names() -> tuple[str, ...]:
    """The installed benchmarks' names, sorted."""
    return tuple(sorted(installed(GROUP)))


@lru_cache(maxsize=None)
def benchmark(name: str) -> AnyBenchmark:
    """The installed benchmark ``name``.

    Raises:
        UsageError: ``unknown benchmark 'x' (did you mean …?); installed: …``, a module that
            cannot be imported, or an entry point naming something that is not a Benchmark
            (or whose ``name`` is not its entry point's).
    """
    found = cast(AnyBenchmark, load(installed(GROUP), name, "benchmark", Benchmark, "memeval.benchmarks.base.Benchmark"))
    if found.name != name:
        raise UsageError(f"benchmark {name!r}: its entry point names a benchmark called {found.name!r}")
    return found


def find(name: str) -> AnyBenchmark | None:
    """The benchmark ``name``, or None when it is not installed or cannot load (a record read
    where the benchmark that wrote it is missing)."""
    try:
        return benchmark(name)
    except UsageError:
        return None


def grader_owner(grader: str) -> AnyBenchmark | None:
    """The installed benchmark with a grader a suite may select (computed or judge) named
    ``grader``, or None."""
    for name in names():
        found = find(name)
        if found is not None and (grader in found.computed or grader in found.judges):
            return found
    return None


__all__ = ["GROUP", "AnyBenchmark", "Benchmark", "benchmark", "find", "grader_owner", "names"]
