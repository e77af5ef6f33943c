"""No import cycle between memeval's packages: the import graph, read with ``ast`` from the
source (imports inside functions included, ``if TYPE_CHECKING:`` blocks included too: a cycle
hidden from the interpreter is still a cycle in the design), collapsed to packages
(``memeval.run``, ``memeval.score``, … and each top-level module), has no strongly connected
component of more than one package."""

from __future__ import annotations

import ast
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent / "memeval"



def _unit(module: str) -> str:
    """The package a module belongs to: ``memeval.runner.suite`` → ``memeval.run``."""
    parts = module.split(".")
    return ".".join(parts[:2])


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, known: frozenset[str] = frozenset()) -> set[str]:
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names = {f"{base}.{a.name}" for a in node.names}
            # `from package import module` loads the module; the package counts only when a name
            # that is not one of its modules is taken from it
            out |= names if names <= known else names | {base}
    return {m for m in out if m.startswith("memeval")}


def package_graph() -> dict[str, set[str]]:
    """Package → the packages its modules import (itself left out)."""
    graph: dict[str, set[str]] = {}
    known = {_module_name(p) for p in ROOT.rglob("*.py")}
    for path in ROOT.rglob("*.py"):
        source = _unit(_module_name(path))
        targets = {_unit(m) for m in _imports(path, frozenset(known)) if m in known and _unit(m) != source and m != "memeval"}
        graph.setdefault(source, set()).update(targets)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_checker_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset({"a", "b", "c"})]


def test_no_import_cycle_between_packages() -> None:
    graph = package_graph()
    assert "memeval.engines" in graph["memeval.cli"]  # the graph was read: no cycle in an empty one proves nothing
    assert cycles(graph) == []


def module_graph() -> dict[str, set[str]]:
    """Module → the memeval modules it imports."""
    known = {_module_name(p) for p in ROOT.rglob("*.py")}
    return {_module_name(p): {m for m in _imports(p, frozenset(known)) if m in known and m != _module_name(p)} for p in ROOT.rglob("*.py")}


def test_no_import_cycle_between_modules() -> None:
    """Within a package too (e.g. probes and synthesis take a context instead of importing the
    scenario runner that imports them)."""
    graph = module_graph()
    assert graph["memeval.engines.reference.engine"], "the module graph was read"
    assert cycles(graph) == []


def _engine_package(module: str, depth: int = 3) -> str | None:
    """The engine subpackage a module belongs to (``memeval.engines.reference.index`` →
    ``memeval.engines.reference``), or None for the engine boundary and other packages; with
    ``depth=4`` the subpackage's ``__init__`` itself belongs to none (it is its public face)."""
    parts = module.split(".")
    if len(parts) >= depth and parts[:2] == ["memeval", "engines"] and (ROOT / "engines" / parts[2]).is_dir():
        return ".".join(parts[:3])
    return None


def internal_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(importer, imported) pairs where a module outside an engine's subpackage imports one of
    that subpackage's modules rather than the names its ``__init__`` exposes."""
    return sorted((source, target) for source, targets in graph.items() for target in targets
                  if (owner := _engine_package(target, depth=4)) and _engine_package(source) != owner)


def test_the_internals_check_finds_a_reach_into_an_engine() -> None:
    graph = {"memeval.engines.rag_baseline": {"memeval.engines.reference.embedders", "memeval.engines.reference"},
             "memeval.engines.reference.rank": {"memeval.engines.reference.index"}}
    assert internal_imports(graph) == [("memeval.engines.rag_baseline", "memeval.engines.reference.embedders")]


def test_nothing_outside_an_engine_imports_its_internals() -> None:
    """An engine's subpackage (``memeval/engines/reference/``, ``cortex/``, ``mem0/``) is its own:
    the harness, other engines and the CLI use what its ``__init__`` exposes."""
    graph = module_graph()
    assert "memeval.engines.reference.index" in graph, "the engine subpackages were read"
    assert internal_imports(graph) == []


# The layers of docs/architecture.md, lowest first: a package imports only packages of lower layers.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "secrets", "util", "stats", "text", "vocab"),
    ("record", "datasets", "plugins", "scaffold"),
    ("engines", "benchmarks"),
    ("servers",),
    ("spec",),
    ("plan", "agent"),
    ("score",),
    ("report",),
    ("llm", "comparison"),
    ("runner",),
    ("sweep", "viewer"),
    ("api", "cli"),
)


def layer_breaches(graph: dict[str, set[str]]) -> list[str]:
    """Imports that go sideways or up the layers, and packages no layer names."""
    rank = {f"memeval.{name}": i for i, layer in enumerate(LAYERS) for name in layer}
    rank["memeval"] = len(LAYERS)  # the package's __init__ loads names on first use only
    out = [f"{p} is in no layer" for p in sorted(graph) if p not in rank]
    out += [f"{p} → {t}" for p, targets in sorted(graph.items()) for t in sorted(targets)
            if p in rank and t in rank and rank[t] >= rank[p]]
    return out


def test_the_layer_check_finds_an_upward_import_and_an_unplaced_package() -> None:
    graph = {"memeval.score": {"memeval.report", "memeval.stats"}, "memeval.nowhere": set()}
    assert layer_breaches(graph) == ["memeval.nowhere is in no layer", "memeval.score → memeval.report"]


def test_packages_import_only_lower_layers() -> None:
    """The rules docs/architecture.md states, checked on the source."""
    graph = package_graph()
    assert len(graph) > 15, "the package graph was read"
    assert layer_breaches(graph) == []
