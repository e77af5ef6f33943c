"""Recognise what kind of spec a file is and load it with the right loader."""

from __future__ import annotations

from memeval.engines.definition import load_engine_def
from memeval.errors import SpecError, SpecIssue
from memeval.spec.load import load_suite, read_file
from memeval.spec.matrix import load_matrix
from memeval.suggest import counted


def load_any(path: str) -> str:
    """Load ``path`` as whatever it declares (suite, scenario, engine, matrix).

    Returns a short description of what was loaded. Raises SpecError with every issue.
    """
    data, _, _ = read_file(path)
    if isinstance(data, dict) and "engine" in data and "adapter" in data:
        return f"engine {load_engine_def(path).name}"
    if isinstance(data, dict) and "matrix" in data:
        matrix = load_matrix(path)
        return f"matrix {matrix.name}, {counted(len(matrix.profiles), 'profile')}"
    if isinstance(data, dict) and ("suite" in data or "scenario" in data):
        suite = load_suite(path)
        probes = sum(len(s.probes) for s in suite.scenarios)
        return f"suite {suite.name}: {counted(len(suite.scenarios), 'scenario')}, {counted(probes, 'probe')}"
    raise SpecError([SpecIssue(path, 1, 1, "", "not a memeval spec: expected a top-level suite:, scenario:, engine: or matrix: key")])
