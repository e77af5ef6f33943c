"""Shared test setup: keep tests hermetic (no writes to the real home folder); where the
repository, fixtures and goldens are; memeval's CLI in-process (:func:`cli`) and as a process
(:data:`MEMEVAL`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
GOLDEN = os.path.join(ROOT, "tests", "golden")
# ``memeval`` as a process: append the command and its arguments.
MEMEVAL = [sys.executable, "-c", "import sys; from memeval.cli import main; main(sys.argv[1:])"]
# The user's home as the test session found it: nothing may be written below it.
REAL_HOME = os.path.realpath(os.path.expanduser("~"))
# Variables that would point a test's writes (answer cache, model downloads) at the user's folders.
_USER_PATHS = ("XDG_CACHE_HOME", "MEMEVAL_CACHE_DIR", "HF_HOME")


def cli(args: Sequence[str]) -> int | str | None:
    """Run ``memeval <args>`` in this process; the code it exits with (output goes to capsys)."""
    from memeval.cli import main

    with pytest.raises(SystemExit) as done:
        main(list(args))
    return done.value.code


def pytest_configure(config: pytest.Config) -> None:
    """Before any fixture of any scope (a session fixture runs before the per-test HOME below):
    HOME is a folder of the session's own and no variable points into the user's folders, so
    neither this process nor one it starts writes there."""
    home = tempfile.mkdtemp(prefix="memeval-test-home-")
    config.stash[_SESSION_HOME] = home
    os.environ["HOME"] = home
    os.environ["HF_HUB_OFFLINE"] = "1"
    for name in _USER_PATHS:
        os.environ.pop(name, None)


def pytest_unconfigure(config: pytest.Config) -> None:
    home = config.stash.get(_SESSION_HOME, None)
    if home:
        shutil.rmtree(home, ignore_errors=True)


_SESSION_HOME = pytest.StashKey[str]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", help="Rewrite golden files from current output.")


class StartsAProcess(RuntimeError):
    """A test not marked ``slow`` started a process (itself or through a fixture it uses)."""


_IN_FAST_TEST: list[str] = []  # the node id of the running test when it is not marked slow
_popen_init = subprocess.Popen.__init__


def _guarded_popen_init(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
    if _IN_FAST_TEST:
        raise StartsAProcess(f"{_IN_FAST_TEST[0]} starts a process: mark it @pytest.mark.slow "
                             "(the fast lane, -m 'not slow', must start none)")
    _popen_init(self, *args, **kwargs)


subprocess.Popen.__init__ = _guarded_popen_init  # type: ignore[method-assign]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """While a test that is not marked ``slow`` runs (its fixtures' setup and teardown included),
    starting a process raises :class:`StartsAProcess`: the fast lane stays fast as tests are added."""
    if item.get_closest_marker("slow") is None:
        _IN_FAST_TEST.append(item.nodeid)
    try:
        yield
    finally:
        _IN_FAST_TEST.clear()


@pytest.fixture(autouse=True)
def _hermetic_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Callable[[str, str], None]:
    """Compare text with ``tests/golden/<name>``; ``--update-goldens`` rewrites it."""

    def check(name: str, text: str) -> None:
        path = os.path.join(GOLDEN, name)
        if request.config.getoption("--update-goldens") or not os.path.exists(path):
            if not request.config.getoption("--update-goldens"):
                pytest.fail(f"golden file {name} is missing: run pytest --update-goldens and review it")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
        with open(path, encoding="utf-8") as fh:
            assert text == fh.read(), f"output differs from golden {name} (pytest --update-goldens to accept)"

    return check
