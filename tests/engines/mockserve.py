"""Shared pieces of the in-process adapter tests (mem0, Graphiti) that drive a library against
the mock inference server: items and recalls by node, the mock's chat-call count, and a whole
``memeval run`` with the adapter's engine file. The ``mock`` fixture is in tests/engines/conftest.py."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import httpx

from memeval.engines.base import Engine, Hit, MemoryItem, RecallRequest
from memeval.servers.launch import RunningServer
from tests.conftest import FIXTURES, MEMEVAL, ROOT


def turn(tenant: str, text: str, node: str = "agent:a", i: int = 0, **kw: Any) -> MemoryItem:
    """A turn of thread ``t1`` on ``node`` (its agent when an ``agent:`` node), ``i`` minutes after 09:00."""
    agent = node.split(":", 1)[1] if node.startswith("agent:") else None
    return MemoryItem(tenant, node, "turn", text, agent=agent, thread="t1", turn=i,
                      at=f"2026-09-01T{9 + i // 60:02d}:{i % 60:02d}:00Z", **kw)


def recall(engine: Engine, tenant: str, query: str | None, nodes: tuple[str, ...] = ("agent:",),
           limit: int = 10) -> list[Hit]:
    return engine.recall(RecallRequest(tenant, nodes, query, limit))


def chat_calls(mock: RunningServer) -> int:
    """How many chat completions the mock has answered so far."""
    return httpx.get(mock.url + "/_mock/stats", timeout=5).json()["calls"]["chat"]


def assert_memeval_run_leaves_nothing(tmp_path: Path, adapter: str, unset: tuple[str, ...]) -> None:
    """``memeval run`` of the mini fixture with ``engines/<adapter>.yaml``, in a process whose HOME
    and TMPDIR are empty folders and ``unset`` variables are absent: it must start the mock, pass
    every scenario with the adapter's capabilities, and leave HOME and TMPDIR empty."""
    home, tmp, out = tmp_path / "home", tmp_path / "tmp", tmp_path / "run"
    home.mkdir()
    tmp.mkdir()
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(tmp)}
    for name in unset:
        env.pop(name, None)
    done = subprocess.run([*MEMEVAL, "run", os.path.join(FIXTURES, "mini.yaml"), "--engine",
                           os.path.join(ROOT, "engines", f"{adapter}.yaml"), "--out", str(out), "--quiet"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    # --quiet: the output paths only; the libraries' logs and warnings went to library.log
    assert done.stderr.splitlines() == [f"wrote {out / 'run.json'}, run.md and run.html"], done.stderr[-2000:]
    assert (out / "library.log").is_file()
    record = json.loads((out / "run.json").read_text())
    assert record["engine"]["name"] == adapter
    assert record["engine"]["capabilities"] == ["erase", "forget", "inspect"]
    assert all(s["status"] == "ok" for s in record["scenarios"])
    assert "mock-inference listening" in (out / "server.log").read_text()
    assert list(home.iterdir()) == [] and list(tmp.iterdir()) == []
