"""The generic MCP engine through an MCP server no one here wrote: CortexDB's ``cortexdb-mcp``
0.8 (PyPI), started over stdio and pointed at memeval's fake CortexDB (loopback only; with a key
set it makes no sign-up call). cortexdb-mcp needs ``mcp<2`` while memeval uses the 2.x SDK, so
it lives in a virtualenv of its own: ``$MEMEVAL_CORTEXDB_MCP`` names its ``cortexdb-mcp``
command, else ``<this venv>/cortexdb-mcp/bin/cortexdb-mcp`` (docs/engines-mcp.md says how to
make it); without it these tests are skipped, saying so.

What they pin down is the state of that pairing, found by running it: on the fake's 0.12 wire
every contract passes but two, and each of those two is the server's doing (its delete keeps
the event; CortexDB lists every event twice and cortexdb-mcp pages by offset through the
copies). On the 0.10 wire its search is refused, as is the default recall of the official SDK
(``cortexdbai`` 0.12, when installed in the same virtualenv), which the 0.12 wire serves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memeval.servers.launch import RunningServer, start_server
from tests.conftest import MEMEVAL, ROOT

pytestmark = pytest.mark.slow
COMMAND = os.environ.get("MEMEVAL_CORTEXDB_MCP") or os.path.join(sys.prefix, "cortexdb-mcp", "bin", "cortexdb-mcp")
KEY = "sk-planted-CORTEXDB-MCP-41c9e2"
FAST = ["--index-delay", "0.05", "--enrich-delay", "0.005"]

if not os.access(COMMAND, os.X_OK):
    pytest.skip(f"cortexdb-mcp is not installed at {COMMAND} (see docs/engines-mcp.md)", allow_module_level=True)


@pytest.fixture(params=["0.12", "0.10"], scope="module")
def fake(request: pytest.FixtureRequest) -> Iterator[tuple[RunningServer, str]]:
    """The fake CortexDB on one wire, and that wire."""
    with start_server("fake_cortex", [*FAST, "--wire", request.param], env={"CORTEX_API_KEY": KEY}) as running:
        yield running, request.param


def check_engine(fake: RunningServer, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": os.path.dirname(COMMAND) + os.pathsep + os.environ.get("PATH", ""),
           "CORTEX_DB_URL": fake.url, "CORTEX_DB_KEY": KEY, "HOME": str(home), "XDG_CONFIG_HOME": str(home)}
    return subprocess.run([*MEMEVAL, "check-engine", "cortexdb-mcp", "--settle-s", "10"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)


def test_cortexdb_mcp_through_the_generic_engine(fake: tuple[RunningServer, str], tmp_path: Path) -> None:
    server, wire = fake
    done = check_engine(server, tmp_path)
    lines = {line[6:].split(":")[0]: line[:4].strip() for line in done.stdout.splitlines()[1:-1]}
    assert KEY not in done.stdout + done.stderr
    assert not (tmp_path / "cortexdb-mcp" / "state.json").exists()  # no anonymous sign-up happened
    if wire == "0.10":
        assert done.returncode == 1
        assert "unknown recall field(s) diagnostics" in done.stdout
        return
    assert done.returncode == 1, done.stdout + done.stderr
    assert {c for c, status in lines.items() if status != "PASS"} == {
        "forget removes from recall and listing", "erase empties a tenant", "paging returns each item once"}
    assert "forget of a stored item reported 0 removed" in done.stdout
    assert "SKIP  erase empties a tenant: no erase capability" in done.stdout
    assert "twice" in done.stdout


SDK_CALLS = """
import json, sys
from cortexdb.v1.client import V1Client
from cortexdb.v1.exceptions import V1APIError
client = V1Client(sys.argv[1], bearer=sys.argv[2], actor="user:local")  # the fake key's caller
scope = "app:memeval/project:sdk"
out = {"version": client.version()}
client.experience(scope, text="The zircon badge opens the north door.", wait="indexed")
try:
    out["context_block"] = client.recall(scope, query="zircon badge").get("context_block")
except V1APIError as err:
    out["refused"] = str(err)
print(json.dumps(out))
"""


def test_the_official_sdk_s_default_recall_works_on_the_newer_wire_only(fake: tuple[RunningServer, str]) -> None:
    """cortexdbai 0.12 (installed beside cortexdb-mcp) as a client of the fake: its default recall
    sends ``diagnostics``, which only the 0.12 wire accepts."""
    server, wire = fake
    python = os.path.join(os.path.dirname(COMMAND), "python")
    if subprocess.run([python, "-c", "import cortexdb.v1"], capture_output=True).returncode:
        pytest.skip(f"cortexdbai is not installed beside {COMMAND}")
    done = subprocess.run([python, "-c", SDK_CALLS, server.url, KEY], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["version"]["wire"] == wire
    if wire == "0.10":
        assert "unknown recall field(s) diagnostics" in seen["refused"]
    else:
        assert seen["context_block"].endswith("[user] The zircon badge opens the north door.")
