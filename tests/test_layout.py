"""tests/ mirrors memeval/: a folder of tests is named after the package it tests, or is one of
the few cross-cutting folders named here with why (so no grab bag of "core" tests grows back)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ROOT

CROSS_CUTTING = {
    "dask": "the Dask executor across processes (an optional extra, its own lane)",
    "docs": "the README and docs/ pages: links resolve, every page is linked",
    "fixtures": "records and files the tests read, derived by tools/",
    "golden": "expected reports, compared byte for byte",
    "install": "a built wheel installed in a fresh virtualenv",
    "language": "keys of the YAML language run end to end, and the lean harness (no module loaded unused)",
    "plugin_benchmark": "a third-party benchmark package, registered from outside",
    "plugin_engine": "a third-party adapter package, registered from outside",
    "reliability": "whole runs under engine faults, interrupts and resumes",
    "specs": "the shipped suites under specs/",
}


def misplaced(tests: Path, package: Path) -> list[str]:
    """Test folders that neither mirror a package (or module) of ``package`` nor are cross-cutting."""
    names = {p.name for p in package.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    names |= {p.stem for p in package.glob("*.py")}
    return sorted(d.name for d in tests.iterdir()
                  if d.is_dir() and d.name != "__pycache__" and d.name not in names and d.name not in CROSS_CUTTING)


def test_every_test_folder_mirrors_a_package_or_says_why_not() -> None:
    assert misplaced(Path(ROOT) / "tests", Path(ROOT) / "memeval") == []


def test_every_engine_test_folder_mirrors_an_engine_subpackage() -> None:
    engines = Path(ROOT) / "memeval" / "engines"
    assert misplaced(Path(ROOT) / "tests" / "engines", engines) == []


def test_a_grab_bag_folder_is_found(tmp_path: Path) -> None:
    (tmp_path / "memeval" / "runner").mkdir(parents=True)
    (tmp_path / "memeval" / "runner" / "__init__.py").write_text("")
    (tmp_path / "memeval" / "plan.py").write_text("")
    for name in ("runner", "plan", "core", "fixtures"):
        (tmp_path / "tests" / name).mkdir(parents=True)
    assert misplaced(tmp_path / "tests", tmp_path / "memeval") == ["core"]
