"""Tests never write below the user's home: not from a per-test fixture, and not from a session or
module fixture, which pytest sets up before the per-test HOME (tests/conftest.py). And the fast
lane starts no process: a test that does must be marked slow."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from memeval.llm.cache import cache_folder
from tests.conftest import REAL_HOME, StartsAProcess


@pytest.fixture(scope="session")
def session_environment() -> dict[str, str]:
    """The environment a session-scoped fixture (a server, a shared run) starts processes with."""
    return dict(os.environ)


def _outside_real_home(path: str) -> bool:
    return os.path.commonpath([os.path.realpath(path), REAL_HOME]) != REAL_HOME


def test_a_session_fixture_sees_a_home_of_the_session_not_the_users(session_environment: dict[str, str]) -> None:
    assert _outside_real_home(session_environment["HOME"])
    assert _outside_real_home(cache_folder(session_environment))


def test_a_test_sees_its_own_home_and_the_answer_cache_follows_it() -> None:
    assert _outside_real_home(os.environ["HOME"]) and _outside_real_home(cache_folder(os.environ))
    assert cache_folder(os.environ) == os.path.join(os.environ["HOME"], ".cache", "memeval", "answers")


def test_the_cache_folder_honours_its_variables() -> None:
    assert cache_folder({"MEMEVAL_CACHE_DIR": "/c", "XDG_CACHE_HOME": "/x", "HOME": "/h"}) == "/c"
    assert cache_folder({"XDG_CACHE_HOME": "/x", "HOME": "/h"}) == os.path.join("/x", "memeval", "answers")
    assert cache_folder({"HOME": "/h"}) == os.path.join("/h", ".cache", "memeval", "answers")


def test_a_test_not_marked_slow_cannot_start_a_process() -> None:
    with pytest.raises(StartsAProcess, match="test_a_test_not_marked_slow_cannot_start_a_process starts a process"):
        subprocess.run([sys.executable, "-c", "pass"], check=True)


@pytest.mark.slow
def test_a_slow_test_may() -> None:
    assert subprocess.run([sys.executable, "-c", "pass"], check=True).returncode == 0
