"""The core never names a benchmark: outside each benchmark's own subpackage, no identifier,
import, string or template text (docstrings and comments aside) names LoCoMo, LongMemEval or
their graders and prompts, so a benchmark is looked up by name and never branched on. And the
built-ins are found the way a plugin is: through the ``memeval.benchmarks`` entry points."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from memeval.benchmarks import benchmark, names
from memeval.errors import UsageError

ROOT = Path(__file__).resolve().parents[2] / "memeval"
OWN = (ROOT / "benchmarks" / "locomo", ROOT / "benchmarks" / "longmemeval")
NAMED = re.compile(r"locomo|longmemeval|(?<![a-z])lme(?![a-z])|mem0-j", re.IGNORECASE)


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes (the first string of a module, class or function body)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                out.add(id(first.value))
            # an attribute's docstring: a bare string right after an assignment
            for before, after in zip(node.body, node.body[1:]):
                if isinstance(before, (ast.Assign, ast.AnnAssign)) and isinstance(after, ast.Expr) \
                        and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str):
                    out.add(id(after.value))
    return out


def benchmark_names_in(source: str) -> list[tuple[int, str]]:
    """(line, text) of every identifier, import or string in ``source`` (Python) that names a
    benchmark; docstrings and comments are not code and are left out."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        texts: list[str] = []
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            texts = [node.value]
        elif isinstance(node, ast.Name):
            texts = [node.id]
        elif isinstance(node, ast.Attribute):
            texts = [node.attr]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            texts = [node.name]
        elif isinstance(node, ast.alias):
            texts = [node.name, node.asname or ""]
        elif isinstance(node, ast.ImportFrom):
            texts = [node.module or ""]
        found += [(getattr(node, "lineno", 0), t) for t in texts if NAMED.search(t)]
    return found


def _core_files(suffixes: tuple[str, ...]) -> list[Path]:
    return sorted(p for p in ROOT.rglob("*") if p.suffix in suffixes and not any(p.is_relative_to(o) for o in OWN))


def test_no_core_module_names_a_benchmark() -> None:
    offenders = [f"{path.relative_to(ROOT.parent)}:{line}: {text[:80]!r}"
                 for path in _core_files((".py",)) for line, text in benchmark_names_in(path.read_text(encoding="utf-8"))]
    assert offenders == []


def test_no_report_template_names_a_benchmark() -> None:
    offenders = [f"{path.relative_to(ROOT.parent)}:{n}" for path in _core_files((".j2",))
                 for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if NAMED.search(line)]
    assert offenders == []


def test_the_scan_catches_a_branch_on_a_format_but_not_a_docstring() -> None:
    core = '"""Reads LoCoMo and LongMemEval files."""\nX = 1\n"""An attribute docstring naming locomo."""\n'
    assert benchmark_names_in(core) == []
    for code in ('if fmt == "longmemeval":\n    pass\n', "from memeval.benchmarks.locomo import graders\n",
                 "import memeval.benchmarks.longmemeval\n", "LOCOMO_IDS = {}\n", "x = f'{y} LoCoMo row'\n",
                 "grader = 'mem0-j'\n", "def lme_prompt(): pass\n"):
        assert benchmark_names_in(code), code


def test_the_built_ins_register_through_the_entry_points() -> None:
    assert {"locomo", "longmemeval"} <= set(names())
    assert benchmark("locomo").name == "locomo" and benchmark("longmemeval").title == "LongMemEval"


def test_an_unknown_benchmark_is_one_line_with_a_suggestion() -> None:
    with pytest.raises(UsageError) as err:
        benchmark("longmemevl")
    assert str(err.value).startswith("unknown benchmark 'longmemevl' (did you mean 'longmemeval'?); installed: ")
    assert "\n" not in str(err.value)
