"""The whole mini suite end to end through ``memeval run`` on the HTTP engines, against the fake
CortexDB as a real process: started by the test (direct and hosted) or by memeval itself from
``engines/fake-cortex.yaml``'s server block."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from memeval.cli import cli
from memeval.engines.cortex.layout import tenant_root
from memeval.servers.launch import RunningServer
from tests.conftest import FIXTURES, ROOT
from tests.engines.conftest import CORTEX_KEY, HOSTED_KEY

pytestmark = pytest.mark.slow  # every test here starts a process or uses one a fixture started

MINI = os.path.join(FIXTURES, "mini.yaml")
ENGINES = os.path.join(ROOT, "engines")


def run_mini(out: Path, engine: str, *extra: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["run", MINI, "--engine", engine, "--out", str(out), "--quiet", *extra])
    assert result.exit_code == 0, f"{result.output}\n{result.exception!r}"
    return json.loads((out / "run.json").read_text())


def assert_complete(record: dict[str, Any]) -> list[str]:
    """Every scenario ran, every probe was scored, everything written was forgotten; the tenants."""
    assert [s["status"] for s in record["scenarios"]] == ["ok"]
    assert record["probes"] and all(p["status"] == "scored" for p in record["probes"])
    assert all(s["cleanup"] == {"forgotten": True, "reason": None} for s in record["scenarios"])
    return [ns for s in record["scenarios"] for ns in s["tenants"].values()]


def test_mini_suite_on_cortex(cortex: RunningServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORTEX_DB_URL", cortex.url)
    monkeypatch.setenv("CORTEX_DB_KEY", CORTEX_KEY)
    record = run_mini(tmp_path, os.path.join(ENGINES, "cortex.yaml"), "--enrich-wait", "1")
    tenants = assert_complete(record)
    synthesis = record["scenarios"][0]["synthesis"]
    assert synthesis["built"] > 0 and synthesis["derived"]["acme"]["facts"]
    assert any(p["captured"] is not None for p in record["probes"] if p["phase"] == "synthesis")
    assert record["usage"]["calls"] > 0 and record["usage"]["cost_usd"] > 0
    assert record["engine"]["server_version"] == "v0.10.5-fake"
    assert not (tmp_path / "server.log").exists()  # CORTEX_DB_URL set: no server of its own
    scopes = httpx.get(f"{cortex.url}/v1/scopes/list", params={"prefix": "app:tinymemory", "limit": 1000},
                       headers={"Authorization": f"Bearer {CORTEX_KEY}"}).json()["items"]
    assert not [s for s in scopes for t in tenants if s["path"].startswith(tenant_root(t) + "/")]


def test_a_refused_write_shows_the_servers_reason_in_the_run(cortex: RunningServer, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORTEX_DB_URL", cortex.url)
    monkeypatch.setenv("CORTEX_DB_KEY", CORTEX_KEY)
    rule = {"route": "v1/experience", "status": 403, "count": 1000, "error_code": "POLICY_DENIED"}
    cortex.faults(clear=True, fail=[rule])
    try:
        record = run_mini(tmp_path, os.path.join(ENGINES, "cortex.yaml"), "--enrich-wait", "0")
    finally:
        cortex.faults(clear=True)
    scenario = record["scenarios"][0]
    assert scenario["status"] == "errored"
    assert scenario["error"].startswith("cortex POST v1/experience: 403 POLICY_DENIED")
    assert "check CORTEX_DB_KEY" in scenario["error"] and CORTEX_KEY not in json.dumps(record)


def test_mini_suite_on_tinyhumans(hosted: RunningServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TINYHUMANS_API_URL", hosted.url)
    monkeypatch.setenv("TINYHUMANS_API_KEY", HOSTED_KEY)
    definition = tmp_path / "tinyhumans-fast.yaml"  # engines/tinyhumans.yaml paces for the real rate limit
    definition.write_text("engine: tinyhumans-fast\nadapter: tinyhumans\nenrich_wait_s: 0.2\n")
    record = run_mini(tmp_path / "out", str(definition))
    tenants = assert_complete(record)
    assert record["scenarios"][0]["synthesis"]["enrichment"]["fixed_wait_s"] == 0.2
    assert record["usage"] is None and "derived" not in record["scenarios"][0]["synthesis"]
    scopes = httpx.get(f"{hosted.url}/memory/scopes", params={"prefix": "app:tinymemory", "limit": 1000},
                       headers={"Authorization": f"Bearer {HOSTED_KEY}"}).json()["data"]["scopes"]
    assert not [s for s in scopes for t in tenants if tenant_root(t) + "/" in s]


def test_mini_suite_through_a_server_memeval_starts_and_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CORTEX_DB_URL", raising=False)
    monkeypatch.delenv("CORTEX_DB_KEY", raising=False)
    monkeypatch.delenv("CORTEX_API_KEY", raising=False)
    record = run_mini(tmp_path, os.path.join(ENGINES, "fake-cortex.yaml"), "--enrich-wait", "1")
    assert_complete(record)
    log = (tmp_path / "server.log").read_text()
    pid = int(re.search(r"server pid (\d+)", log).group(1))
    assert "server exited with code 0" in log
    assert not os.path.exists(f"/proc/{pid}")
    with pytest.raises(httpx.TransportError):
        httpx.get(record["engine"]["settings"]["url"] + "/v1/admin/health", timeout=1)
