"""Engine definition files: read, validate and find them, and say what one would start.

``--engine`` takes a path to a definition file, or a name. A name is looked up as
``engines/<name>.yaml`` in the working directory, then in memeval's own ``engines/`` folder
(the definitions that ship with it), then next to the suite's folder, and finally as a bare
adapter name.

Code never runs from data the user did not choose: a definition with a ``server:`` block starts
a process, so one found only next to the suite (a folder the user may have downloaded) is
refused unless the user names its file (``--engine path/to/x.yaml``). ``memeval plan`` prints
what a run would start (:func:`describe_engine`).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import replace

import memeval
from memeval.engines import adapters, load_adapter
from memeval.engines.base import Adapter
from memeval.engines.definition import EngineDef
from memeval.engines.server import adapter_url_env
from memeval.errors import SpecError, UsageError
from memeval.spec.load import read_file
from memeval.spec.validate import schema_issues
from memeval.util.suggest import did_you_mean



def _shipped_folder() -> str:
    """The definitions memeval ships: the copy a built package holds (``memeval/shipped_engines``,
    made by setup.py from the checkout's ``engines/``), else the checkout's ``engines/`` itself."""
    package = os.path.dirname(os.path.abspath(memeval.__file__))
    built = os.path.join(package, "shipped_engines")
    return built if os.path.isdir(built) else os.path.join(os.path.dirname(package), "engines")


SHIPPED = _shipped_folder()


def load_engine_def(path: str) -> EngineDef:
    """Load and validate one engine definition file. Raises SpecError."""
    data, marks, _ = read_file(path)
    issues = schema_issues(data, marks, "engine", path)
    if issues:
        raise SpecError(issues)
    return EngineDef(data["engine"], data["adapter"], dict(data.get("settings", {})), data.get("enrich_wait_s"),
                     data.get("server"), path)


def resolve_engine(name: str, suite_path: str | None = None) -> EngineDef:
    """Find the engine definition ``--engine`` names (see the module docstring).

    Raises:
        UsageError: nothing of that name exists (lists what does), or the definition found
            starts a process and lies only next to the suite.
        SpecError: the definition file is invalid.
    """
    if name.endswith((".yaml", ".yml")) or os.sep in name:
        if not os.path.exists(name):
            raise UsageError(f"--engine: no such file {name!r}")
        return load_engine_def(name)
    folders = _search_folders(suite_path)
    for folder, trusted in folders:
        candidate = os.path.join(folder, f"{name}.yaml")
        if os.path.exists(candidate):
            found = load_engine_def(candidate)
            started = _started(found)
            if started is not None and not trusted:
                shown = os.path.relpath(candidate)
                raise UsageError(f"--engine {name}: {shown} lies next to the suite and starts a process "
                                 f"(`{_argv(started)}`); memeval starts only what ships with it or "
                                 f"what you name by path: --engine {shown} if you trust it")
            return found
    if name in adapters():
        return EngineDef(name, name)
    known = sorted(set(adapters()) | {n for f, _ in folders for n in _names(f)})
    raise UsageError(f"--engine: unknown engine {name!r}{did_you_mean(name, known)}; known: {', '.join(known)}")


def with_command(engine: EngineDef, command: str | None) -> EngineDef:
    """``engine`` with its ``command`` setting replaced by ``command`` (split as a shell would,
    never run through one); ``engine`` itself when ``command`` is None.

    Raises:
        UsageError: the command is empty or unbalanced, or the adapter does not start a server
            from a command.
    """
    if command is None:
        return engine
    adapter = _adapter(engine.adapter)
    if adapter is None or adapter.starts is None:
        raise UsageError(f"--server: adapter {engine.adapter} does not start a server from a command")
    try:
        argv = shlex.split(command)
    except ValueError as err:
        raise UsageError(f"--server: {err}") from None
    if not argv:
        raise UsageError("--server: the command is empty")
    settings = {k: v for k, v in engine.settings.items() if k != "url"}
    return replace(engine, settings={**settings, "command": argv})


def describe_engine(engine: EngineDef) -> str:
    """One line: the engine, where its definition is, and the command it starts (if any)."""
    where = os.path.relpath(engine.file) if engine.file else "built-in adapter"
    adapter = _adapter(engine.adapter)
    if engine.server is None and adapter is not None and adapter.describe is not None:
        return f"engine {engine.name} ({where}): adapter {engine.adapter}, {adapter.describe(engine.settings)}"
    if engine.server is None:
        return f"engine {engine.name} ({where}): adapter {engine.adapter}, starts no process"
    cwd = engine.server.get("cwd")
    folder = f" in {os.path.relpath(os.path.join(os.path.dirname(engine.file or '.'), cwd))}" if cwd else ""
    url_env = adapter_url_env(engine.adapter)
    unless = f" unless {url_env} is set" if url_env else ""
    return f"engine {engine.name} ({where}): adapter {engine.adapter}, starts `{_argv(engine.server['start'])}`{folder}{unless}"


def _started(engine: EngineDef) -> list[str] | None:
    """The argv the definition starts: its server block's, else the one its adapter starts from
    the settings (an MCP server over stdio); None when it starts nothing."""
    if engine.server is not None:
        return list(engine.server["start"])
    adapter = _adapter(engine.adapter)
    argv = adapter.starts(engine.settings) if adapter is not None and adapter.starts is not None else None
    return list(argv) if argv is not None else None


def _adapter(name: str) -> Adapter | None:
    """The installed adapter, or None (also when it cannot load: creating the engine says why)."""
    if name not in adapters():
        return None
    try:
        return load_adapter(name)
    except UsageError:
        return None


def _argv(argv: list[str]) -> str:
    """The command as a person would type it (``{port}``-style placeholders left unquoted)."""
    return " ".join(a if a and not any(c.isspace() or c in "'\"\\$;&|<>`" for c in a) else shlex.quote(a) for a in argv)


def _search_folders(suite_path: str | None) -> list[tuple[str, bool]]:
    """(folder, whether a definition there may start a process), first match wins."""
    folders = {os.path.realpath(os.path.join(os.getcwd(), "engines")): True, os.path.realpath(SHIPPED): True}
    if suite_path:
        beside = os.path.realpath(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(suite_path))), "engines"))
        folders.setdefault(beside, False)
    return [(f, trusted) for f, trusted in folders.items() if os.path.isdir(f)]


def _names(folder: str) -> list[str]:
    return [f.rsplit(".", 1)[0] for f in os.listdir(folder) if f.endswith(".yaml")]
