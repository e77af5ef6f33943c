"""The package's shape in numbers: modules, lines per module (p50, p90, max, the largest named),
import cycles between packages and between modules, imports that break the layers, and reaches
into an engine's internals — the figures the layout issue is measured by.

    python tools/layout_report.py
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.test_imports import ROOT as PACKAGE  # noqa: E402  (the checks the tests run)
from tests.test_imports import cycles, internal_imports, layer_breaches, module_graph, package_graph  # noqa: E402


def _percentile(values: list[int], q: float) -> int:
    """The nearest-rank percentile (``q`` in 0..100) of a non-empty list."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--largest", type=int, default=5, help="how many of the largest modules to name")
    args = parser.parse_args(argv)
    sizes = {p.relative_to(PACKAGE.parent).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
             for p in sorted(PACKAGE.rglob("*.py"))}
    lines = list(sizes.values())
    print(f"modules {len(lines)}, lines {sum(lines)}; per module p50 {_percentile(lines, 50)}, "
          f"p90 {_percentile(lines, 90)}, max {max(lines)}")
    for path, n in sorted(sizes.items(), key=lambda kv: -kv[1])[: args.largest]:
        print(f"  {n:5d}  {path}")
    packages, modules = package_graph(), module_graph()
    print(f"import cycles: {len(cycles(packages))} between packages, {len(cycles(modules))} between modules")
    print(f"layer breaches: {len(layer_breaches(packages))}; reaches into an engine's internals: "
          f"{len(internal_imports(modules))}")
    for line in layer_breaches(packages) + [f"{a} → {b}" for a, b in internal_imports(modules)]:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
