"""Where ``--engine NAME`` finds a definition: the working directory's engines/ first, then the
definitions memeval ships (the copy inside a built package, else the checkout's engines/)."""

from __future__ import annotations

from pathlib import Path

import pytest

import memeval
from memeval.spec import engine_def
from tests.install.conftest import ROOT


def test_an_editable_install_reads_the_checkouts_folder() -> None:
    assert Path(engine_def.SHIPPED) == ROOT / "engines"


def test_a_built_package_reads_its_own_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "site-packages" / "memeval"
    (package / "shipped_engines").mkdir(parents=True)
    monkeypatch.setattr(memeval, "__file__", str(package / "__init__.py"))
    assert Path(engine_def._shipped_folder()) == package / "shipped_engines"


def test_the_users_folder_takes_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "engines").mkdir()
    (tmp_path / "engines" / "reference-bm25.yaml").write_text(
        "engine: reference-bm25\nadapter: reference\nsettings: {embedder: none, ranking: bm25}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert Path(engine_def.resolve_engine("reference-bm25").file or "").resolve() == \
        (tmp_path / "engines" / "reference-bm25.yaml").resolve()
    assert Path(engine_def.resolve_engine("fake-cortex").file or "").parent == Path(engine_def.SHIPPED)
