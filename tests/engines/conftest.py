"""Shared set-up of the HTTP adapter tests: the fake CortexDB as a real process (direct and
hosted, one of each per test module), a fresh tenant per test, and items written until listed.

The bearer keys are planted, distinctive values, so a leak would show.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from memeval.engines.base import Engine, MemoryItem
from memeval.engines.cortex.adapter import CortexEngine
from memeval.engines.cortex.adapter import create as create_cortex
from memeval.runner.waits import settle
from memeval.servers.launch import RunningServer, start_server

CORTEX_KEY = "sk-planted-CORTEX-6f1d2c9b8a7e"
HOSTED_KEY = "tiny_live_planted-3b7e91c0d5"
FAST = ["--index-delay", "0.05", "--enrich-delay", "0.005"]
QUICK = {"retry_base_s": 0.01}


def fake_cortex(args: Sequence[str], env: Mapping[str, str]) -> Iterator[RunningServer]:
    """The fake CortexDB with fast indexing and enrichment, for a module fixture to yield from."""
    with start_server("fake_cortex", [*FAST, *args], env=env) as running:
        yield running


@pytest.fixture(scope="module")
def cortex() -> Iterator[RunningServer]:
    """The fake CortexDB with its default flags, keyed with ``CORTEX_KEY``."""
    yield from fake_cortex([], {"CORTEX_API_KEY": CORTEX_KEY})


@pytest.fixture(scope="module")
def hosted() -> Iterator[RunningServer]:
    """The fake CortexDB in the hosted TinyHumans shape, no rate limit, keyed with ``HOSTED_KEY``."""
    yield from fake_cortex(["--hosted", "--hosted-rate-limit", "0"], {"TINYHUMANS_API_KEY": HOSTED_KEY})


def connect(server: RunningServer, monkeypatch: pytest.MonkeyPatch, key: str = CORTEX_KEY,
            **settings: Any) -> CortexEngine:
    """The cortex adapter on ``server`` with quick retries, keyed with ``key`` through the environment."""
    monkeypatch.setenv("CORTEX_DB_KEY", key)
    return create_cortex({"url": server.url, **QUICK, **settings})


@pytest.fixture
def cortex_engine(cortex: RunningServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[CortexEngine]:
    """The cortex adapter on the module's fake CortexDB, whose faults are cleared afterwards."""
    eng = connect(cortex, monkeypatch)
    yield eng
    eng.close()
    cortex.faults(clear=True)


@pytest.fixture(scope="module")
def mock() -> Iterator[RunningServer]:
    """The mock inference server as a real process, for the in-process adapters (mem0, Graphiti)."""
    with start_server("mock_inference") as server:
        yield server


@pytest.fixture
def tenant() -> str:
    """A fresh tenant per test, so tests sharing a server never see each other's items."""
    return f"eval-{uuid.uuid4().hex[:8]}-office-acme"


def turn(tenant: str, text: str, agent: str = "support", index: int = 0, **extra: Any) -> MemoryItem:
    """A user turn of thread ``move`` by ``agent``, ``index`` minutes after 09:00 on 2026-09-01."""
    at = f"2026-09-01T{9 + index // 60:02d}:{index % 60:02d}:00Z"
    return MemoryItem(tenant, f"agent:{agent}", "turn", text, role="user", thread="move", turn=index, agent=agent,
                      at=at, **extra)


def write_all(engine: Engine, items: list[MemoryItem]) -> None:
    """Write ``items`` and wait until every one is listed in its tenant."""
    for item in items:
        engine.write(item)
    written: dict[str, set[str]] = {}
    for item in items:
        written.setdefault(item.tenant, set()).add(item.id)
    settle(engine, written, timeout_s=5, poll_s=0.05)


def assert_engine_leaves_nothing(tmp_path: Path, adapter: str, url: str, text: str, query: str,
                                 unset: str) -> None:
    """Build ``adapter`` in a fresh process whose HOME and TMPDIR are empty folders, write
    ``text``, recall it by ``query`` and close: the engine must have used TMPDIR while open, and
    leave HOME and TMPDIR empty (``unset``: a variable that would point its files elsewhere)."""
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    tmp.mkdir()
    script = (
        "import sys, os\n"
        "from memeval.engines import create_engine\n"
        "from memeval.engines.base import MemoryItem, RecallRequest\n"
        f"e = create_engine({adapter!r}, {{'url': sys.argv[1]}})\n"
        f"e.write(MemoryItem('t', 'agent:a', 'turn', {text!r}, agent='a'))\n"
        f"assert e.recall(RecallRequest('t', ('agent:',), {query!r}, 5))\n"
        "assert os.listdir(os.environ['TMPDIR'])\n"
        "e.close()\n"
    )
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(tmp)}
    env.pop(unset, None)
    done = subprocess.run([sys.executable, "-c", script, url], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert list(home.iterdir()) == []
    assert list(tmp.iterdir()) == []
