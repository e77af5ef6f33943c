"""The default suite through MCP scores what the in-process reference engine scores: the same
engine behind ``memeval serve mcp``, reached through the generic MCP adapter, gives every probe
the same pack hit (and the same pack)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MEMEVAL, ROOT


def run(engine: str, out: Path) -> dict[str, Any]:
    done = subprocess.run([*MEMEVAL, "run", "specs/agent-memory.yaml", "--engine", engine, "--out", str(out),
                           "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert done.returncode in (0, 1), done.stderr
    record: dict[str, Any] = json.loads((out / "run.json").read_text())
    return record


@pytest.mark.slow
def test_the_default_suite_through_mcp_hits_what_the_reference_engine_hits(tmp_path: Path) -> None:
    direct, through = run("reference", tmp_path / "reference"), run("mcp-reference", tmp_path / "mcp")
    assert through["engine"]["name"] == "mcp"
    assert through["engine"]["settings"]["tools"]["recall"].startswith("search(")

    def by_probe(record: dict[str, Any]) -> dict[tuple[str, str, str], tuple[str, Any, str]]:
        return {(p["scenario"], p["id"], p["phase"]): (p["status"], p["hit"], p["pack"]) for p in record["probes"]}

    want, got = by_probe(direct), by_probe(through)
    assert len(want) > 100 and got.keys() == want.keys()
    assert sum(status == "scored" for status, _, _ in want.values()) > 100
    assert {k: v[:2] for k, v in got.items()} == {k: v[:2] for k, v in want.items()}
    assert got == want
