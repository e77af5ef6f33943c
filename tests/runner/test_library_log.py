"""A run's third-party logs and warnings go to library.log (secrets masked); memeval's own
warnings still reach stderr; everything is restored after the run."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import pytest

from memeval.runner.library_log import library_log


def test_library_logs_and_warnings_go_to_the_file_and_memevals_to_stderr(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = logging.getLogger().handlers[:]
    with library_log(str(tmp_path)) as path:
        logging.getLogger("graphiti_core.utils").warning("LLM returned summary for unknown entity")
        logging.getLogger("mem0.vector_stores").warning("connected to postgres://memeval:hunter2-planted@db/x")
        warnings.warn("spaCy is not installed", UserWarning, stacklevel=1)
        logging.getLogger("memeval.engines.http").warning("retrying after 429")
    text = Path(path).read_text(encoding="utf-8")
    assert "graphiti_core.utils: LLM returned summary" in text and "spaCy is not installed" in text
    assert "mem0.vector_stores: connected to postgres://" in text and "hunter2-planted" not in text  # masked
    assert "retrying after 429" not in text
    assert capsys.readouterr().err == "retrying after 429\n"
    assert logging.getLogger().handlers == before


def test_a_link_in_place_of_the_log_is_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me\n")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "library.log").symlink_to(outside)
    with pytest.raises(Exception, match="a symbolic link is refused"):
        with library_log(str(tmp_path / "run")):
            pass
    assert outside.read_text() == "keep me\n"


def test_under_quiet_memevals_own_warnings_go_to_the_file_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with library_log(str(tmp_path), quiet=True) as path:
        logging.getLogger("memeval.engines.http").warning("retrying after 429")
    assert "memeval.engines.http: retrying after 429" in Path(path).read_text(encoding="utf-8")
    assert capsys.readouterr().err == ""


def test_a_handler_on_the_terminal_is_set_aside_for_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    terminal = logging.StreamHandler(sys.stderr)
    logging.getLogger().addHandler(terminal)  # as a library's basicConfig would
    try:
        with library_log(str(tmp_path), quiet=True):
            logging.getLogger("graphiti_core").warning("hundreds of lines")
        assert capsys.readouterr().err == ""
        assert terminal in logging.getLogger().handlers  # restored
    finally:
        logging.getLogger().removeHandler(terminal)
