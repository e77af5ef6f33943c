"""Every requirement a run will have, checked before the first engine or model call.

A run needs its engine's optional packages (an extra), the keys its engine, answerer and judge
read from the environment, the program its engine's server starts, the packages its benchmark
grader uses, and the packages of its executor. Each is checked without starting or importing
anything heavy, and every unmet one is reported together (exit 2), so nothing is measured and
then thrown away for want of something that could have been known at the start.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Callable, Mapping
from typing import TypeVar

from memeval.engines import load_adapter
from memeval.engines.definition import EngineDef
from memeval.errors import UsageError
from memeval.spec.model import Suite

T = TypeVar("T")
DIST = "memeval-harness"
EXECUTOR_EXTRAS = {"dask": (("dask", "dask"), ("distributed", "dask"))}
"""The (module, extra) pairs an ``--executor`` imports."""


def collect(problems: list[str], check: Callable[[], T]) -> T | None:
    """``check()``, or None with its UsageError's message added to ``problems``."""
    try:
        return check()
    except UsageError as err:
        problems.append(str(err))
        return None


def unmet(suite: Suite, engine: EngineDef, env: Mapping[str, str], llm: bool, executor: str = "local") -> list[str]:
    """One line per requirement of this run that is not met (see the module docstring)."""
    problems: list[str] = []
    adapter = collect(problems, lambda: load_adapter(engine.adapter))
    if adapter is not None:
        problems += [_extra(f"engine {engine.name}", module, extra) for module, extra in adapter.extras
                     if not _importable(module)]
        keys = [*adapter.keys, *([str(engine.settings["api_key_env"])] if engine.settings.get("api_key_env") else [])]
        problems += [f"engine {engine.name}: set {key} (a key, read from the environment only)" for key in keys
                     if not env.get(key)]
        starts = engine.server is not None and not (adapter.url_env and env.get(adapter.url_env))
        if starts and engine.server is not None:
            program = str(engine.server["start"][0])
            if program != "{python}" and shutil.which(program) is None:
                unless = f" (or set {adapter.url_env} to use a running server)" if adapter.url_env else ""
                problems.append(f"engine {engine.name}: its server starts {program!r}, which is not on PATH{unless}")
    if llm:
        problems += _grader(suite)
    problems += [_extra(f"--executor {executor}", module, extra) for module, extra in EXECUTOR_EXTRAS.get(executor, ())
                 if not _importable(module)]
    return list(dict.fromkeys(problems))


def require(problems: list[str]) -> None:
    """Raise UsageError listing ``problems`` (nothing when there are none)."""
    if problems:
        lines = "\n".join(f"  {p}" for p in problems)
        raise UsageError(f"{len(problems)} unmet requirement(s); nothing was run:\n{lines}")


def _grader(suite: Suite) -> list[str]:
    """What the suite's benchmark grader needs to score model answers."""
    from memeval.benchmarks import find  # benchmark modules load only for benchmark suites
    from memeval.runner.benchmark import benchmark_info

    info = benchmark_info(suite) if suite.dataset is not None or "x-dataset" in suite.resolved else None
    bench = find(info.format) if info is not None else None
    if info is None or bench is None:
        return []
    problems: list[str] = []
    for name in dict.fromkeys((info.grader, bench.beside.get(info.grader, info.grader))):
        grader = bench.computed.get(name)
        if grader is not None and grader.require is not None:
            collect(problems, grader.require)
    return [f"grader {info.grader}: {p}" for p in problems]


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _extra(who: str, module: str, extra: str) -> str:
    return f"{who} needs {module}: pip install '{DIST}[{extra}]'"
