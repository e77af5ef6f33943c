"""Engine definitions: YAML data naming an adapter, its settings and optionally its server.

``--engine`` takes a path to a definition file, or a name looked up as ``engines/<name>.yaml``
in the working directory and next to the suite's folder, or finally a bare adapter name.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from memeval.engines import adapters, create_engine
from memeval.engines.base import Engine
from memeval.errors import SpecError, UsageError
from memeval.spec.load import read_file
from memeval.spec.validate import schema_issues
from memeval.suggest import did_you_mean


@dataclass(frozen=True)
class EngineDef:
    """A resolved engine definition. ``file`` is None for a bare adapter name."""

    name: str
    adapter: str
    settings: dict[str, Any] = field(default_factory=dict)
    enrich_wait_s: float | None = None
    server: dict[str, Any] | None = None
    file: str | None = None

    def create(self, overrides: dict[str, Any] | None = None) -> Engine:
        """Build the engine, with ``overrides`` on top of the YAML settings (e.g. a started server's URL)."""
        return create_engine(self.adapter, {**self.settings, **(overrides or {})})


def load_engine_def(path: str) -> EngineDef:
    """Load and validate one engine definition file. Raises SpecError."""
    data, marks, _ = read_file(path)
    issues = schema_issues(data, marks, "engine", path)
    if issues:
        raise SpecError(issues)
    return EngineDef(data["engine"], data["adapter"], dict(data.get("settings", {})), data.get("enrich_wait_s"),
                     data.get("server"), path)


def resolve_engine(name: str, suite_path: str | None = None) -> EngineDef:
    """Find the engine definition ``--engine`` names.

    Raises:
        UsageError: nothing of that name exists (lists what does).
    """
    if name.endswith((".yaml", ".yml")) or os.sep in name:
        if not os.path.exists(name):
            raise UsageError(f"--engine: no such file {name!r}")
        return load_engine_def(name)
    for folder in _search_folders(suite_path):
        candidate = os.path.join(folder, f"{name}.yaml")
        if os.path.exists(candidate):
            return load_engine_def(candidate)
    if name in adapters():
        return EngineDef(name, name)
    known = sorted(set(adapters()) | {n for f in _search_folders(suite_path) for n in _names(f)})
    raise UsageError(f"--engine: unknown engine {name!r}{did_you_mean(name, known)}; known: {', '.join(known)}")


def _search_folders(suite_path: str | None) -> list[str]:
    folders = [os.path.join(os.getcwd(), "engines")]
    if suite_path:
        folders.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(suite_path))), "engines"))
    return [f for f in dict.fromkeys(folders) if os.path.isdir(f)]


def _names(folder: str) -> list[str]:
    return [f.rsplit(".", 1)[0] for f in os.listdir(folder) if f.endswith(".yaml")]
