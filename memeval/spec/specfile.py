"""Recognise what kind of spec a file is and load it with the right loader."""

from __future__ import annotations

import os
from dataclasses import dataclass

from memeval.errors import SpecError, SpecIssue
from memeval.spec.engine_def import load_engine_def
from memeval.spec.errata import parse_errata
from memeval.spec.load import load_suite, read_file
from memeval.spec.matrix import load_matrix
from memeval.spec.model import Suite
from memeval.util.suggest import counted

NOT_A_SPEC = "not a memeval spec: expected a top-level suite:, scenario:, engine:, matrix: or errata: key"


@dataclass(frozen=True)
class Loaded:
    """A spec file that loaded: a short description, and the suite when it was one."""

    summary: str
    suite: Suite | None = None


def load_any(path: str) -> str:
    """Load ``path`` as whatever it declares (suite, scenario, engine, matrix, errata).

    Returns a short description of what was loaded. Raises SpecError with every issue.
    """
    return load_spec(path).summary


def load_spec(path: str) -> Loaded:
    """Like :func:`load_any`, keeping the loaded suite (for checks that need the typed value)."""
    data, marks, raw = read_file(path)
    if isinstance(data, dict) and "errata" in data and not {"suite", "scenario"} & set(data):
        parsed, issues = parse_errata(path, data, marks, raw)
        if parsed is None or issues:
            raise SpecError(issues)
        return Loaded(f"errata {parsed[1]}: {counted(len(parsed[2]), 'disputed question')}")
    if isinstance(data, dict) and "engine" in data and "adapter" in data:
        return Loaded(f"engine {load_engine_def(path).name}")
    if isinstance(data, dict) and "matrix" in data:
        matrix = load_matrix(path)
        return Loaded(f"matrix {matrix.name}, {counted(len(matrix.profiles), 'profile')}")
    if isinstance(data, dict) and ("suite" in data or "scenario" in data):
        suite = load_suite(path)
        probes = sum(len(s.probes) for s in suite.scenarios)
        return Loaded(f"suite {suite.name}: {counted(len(suite.scenarios), 'scenario')}, {counted(probes, 'probe')}", suite)
    raise SpecError([SpecIssue(path, 1, 1, "", NOT_A_SPEC)])


def is_spec(path: str) -> bool:
    """Whether ``path`` reads as YAML that declares a spec kind (False for other YAML, such as a
    compose file; True for a file that cannot be read, so that its problem is reported)."""
    try:
        data, _, _ = read_file(path)
    except SpecError:
        return True
    return isinstance(data, dict) and bool({"suite", "scenario", "engine", "matrix", "errata"} & set(data))


def spec_files(folder: str) -> list[str]:
    """The ``.yaml``/``.yml`` files under ``folder``, in sorted order (hidden folders skipped)."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [os.path.join(root, f) for f in sorted(files) if f.endswith((".yaml", ".yml"))]
    return found

