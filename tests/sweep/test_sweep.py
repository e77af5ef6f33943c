"""Sweeps end to end against real fake-CortexDB processes: parallel cells, a skipped profile,
failing cells that do not stop the rest, the summary, the drift guard, Ctrl-C, and no server
left behind."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import textwrap
import time

import pytest

from memeval.engines.server import port_free
from memeval.spec.matrix import load_matrix
from memeval.sweep import ports
from memeval.sweep.cell import drift, run_cell
from memeval.sweep.cells import Cell, plan_cells
from memeval.sweep.control import Control
from memeval.sweep.ports import PortPool, with_port
from tests.conftest import MEMEVAL
from tests.sweep.conftest import write_matrix

SWEEP = [*MEMEVAL, "sweep"]
FAST = """\
flag_prefix: CORTEX_
baseline: {env: {CORTEX_ENTITY_GRAPH: "1", FAKE_CORTEX_INDEX_DELAY: "0.02", FAKE_CORTEX_ENRICH_DELAY: "0.01"}}
run_args: {enrich_wait_s: 0, settle_timeout_s: 5}
cell_timeout_s: 60
"""


def server_pids(folder: str) -> list[int]:
    """The pid of every server the sweep started, from the cells' server.log files."""
    pids = []
    for cell in os.listdir(folder):
        log = os.path.join(folder, cell, "server.log")
        if os.path.exists(log):
            with open(log, encoding="utf-8") as fh:
                pids += [int(p) for p in re.findall(r"server pid (\d+)", fh.read())]
    return pids


def assert_gone(pids: list[int]) -> None:
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.slow


def test_sweep_end_to_end(tmp_path):
    matrix = write_matrix(tmp_path, "matrix: e2e\n" + FAST + textwrap.dedent("""\
    repeat: 2
    parallel: 2
    ports: {from: 41600, to: 41640}
    profiles:
      - {name: baseline}
      - {name: salience-high, env: {CORTEX_SALIENCE_WEIGHT: "0.3"}}
      - {name: writes-fail, env: {FAKE_CORTEX_FAIL: "v1/experience:500:100000"}}
      - {name: bad-mode, env: {CORTEX_BITEMPORAL_MODE: sideways}}
      - {name: rerank, requires: [MEMEVAL_TEST_UNSET_CREDENTIAL]}
    """))
    out = tmp_path / "out"
    proc = subprocess.run(SWEEP + [matrix, "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stderr
    assert "skipped rerank: requires MEMEVAL_TEST_UNSET_CREDENTIAL, which is unset" in proc.stderr
    wrote = next(line for line in proc.stderr.splitlines() if line.startswith("wrote "))
    assert all(f"summary.{kind}" in wrote for kind in ("md", "html", "json")), wrote  # every file it wrote
    summary = json.loads((out / "summary.json").read_text())
    status = {c["label"]: (c["status"], c["reason"] or "") for c in summary["cells"]}
    assert sorted(status) == sorted(f"{p}-r{r}" for p in ("baseline", "salience-high", "writes-fail", "bad-mode")
                                    for r in (1, 2))
    for r in (1, 2):
        assert status[f"baseline-r{r}"][0] == status[f"salience-high-r{r}"][0] == "ok"
        assert status[f"writes-fail-r{r}"][0] == "failed" and "500" in status[f"writes-fail-r{r}"][1]
        assert status[f"bad-mode-r{r}"][0] == "failed" and status[f"bad-mode-r{r}"][1].startswith("server: ")
        assert {"run.json", "run.md", "run.log", "server.log"} <= set(os.listdir(out / f"salience-high-r{r}"))
    comparison = summary["comparison"]
    assert [(p["name"], p["runs"], p["flags_changed"]) for p in comparison["profiles"]] == [
        ("baseline", 2, []), ("salience-high", 2, ["CORTEX_SALIENCE_WEIGHT=0.3"])]
    text = (out / "summary.md").read_text()
    assert text == proc.stdout
    for needed in ("# memeval sweep: e2e", "| writes-fail-r1 | failed |", "- skipped rerank", "## accuracy",
                   "**salience-high**:", "## Flipped probes"):
        assert needed in text
    record = json.loads((out / "salience-high-r1" / "run.json").read_text())
    assert record["profile"] == "salience-high" and record["label"] == "salience-high-r1"
    assert record["flags"] == {"CORTEX_ENTITY_GRAPH": "1", "CORTEX_SALIENCE_WEIGHT": "0.3"}
    assert record["sweep"]["flags_checked"] and record["sweep"]["drift"] == []
    assert "profile <code>salience-high</code>" in (out / "salience-high-r1" / "run.html").read_text()
    assert_gone(server_pids(str(out)))


@pytest.mark.slow


def test_drift_guard_fails_a_cell_whose_server_runs_an_undeclared_flag(tmp_path, monkeypatch):
    matrix = load_matrix(write_matrix(tmp_path, "matrix: drift\n" + FAST + "profiles: [{name: baseline}]\n"))
    monkeypatch.setenv("CORTEX_LEAKED_FLAG", "1")
    cell = Cell(matrix.profiles[0], 1, str(tmp_path / "baseline-r1"))
    result = run_cell(matrix, cell, PortPool(41650, 41660), Control(), lambda _: None)
    assert result.status == "failed"
    assert result.drift == ["CORTEX_LEAKED_FLAG='1' on the server but not in the profile (inherited from the environment?)"]
    record = json.loads((tmp_path / "baseline-r1" / "run.json").read_text())
    assert record["sweep"]["drift"] == result.drift
    assert_gone(server_pids(str(tmp_path)))


def test_drift_lines_name_every_difference_and_hide_secrets():
    assert drift({"A": "1", "B": "2", "C_KEY": "x"}, {"A": "1", "B": "3", "D": "4", "C_KEY": "y"}) == [
        "B: the profile sets '2', the server reports '3'",
        "C_KEY: the profile sets '***', the server reports '***'",
        "D='4' on the server but not in the profile (inherited from the environment?)"]
    assert drift({"A": "1"}, {}) == ["A: the profile sets '1', the server does not report it"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.slow
def test_ctrl_c_stops_the_sweep_tears_servers_down_and_exits_130(tmp_path, sig):
    slow = FAST.replace("settle_timeout_s: 5", "settle_timeout_s: 60")
    matrix = write_matrix(tmp_path, "matrix: stop\n" + slow + textwrap.dedent("""\
    parallel: 2
    ports: {from: 41670, to: 41690}
    profiles:
      - {name: baseline, env: {FAKE_CORTEX_HIDE_LISTINGS: "1"}}
      - {name: other, env: {FAKE_CORTEX_HIDE_LISTINGS: "1"}}
      - {name: never}
    """))
    out = tmp_path / "out"
    proc = subprocess.Popen(SWEEP + [matrix, "--out", str(out), "--quiet"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not out.exists() or len(server_pids(str(out))) < 2:
        assert time.monotonic() < deadline and proc.poll() is None, "the servers did not start"
        time.sleep(0.1)
    time.sleep(1.0)  # the runs are now waiting for writes the servers hide
    pids = server_pids(str(out))
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    summary = json.loads((out / "summary.json").read_text())
    assert {c["label"]: c["status"] for c in summary["cells"]} == {
        "baseline-r1": "interrupted", "other-r1": "interrupted", "never-r1": "interrupted"}
    never = next(c for c in summary["cells"] if c["label"] == "never-r1")
    assert (never["port"], never["seconds"]) == (None, None)  # it never started: no time, not 0 s
    assert "| never-r1 | interrupted | – | – |" in (out / "summary.md").read_text()
    assert_gone(pids)


def test_plan_orders_repeats_and_filters_profiles(tmp_path):
    profiles = "profiles: [{name: a}, {name: b}, {name: c, requires: [X_UNSET]}]\n"
    matrix = load_matrix(write_matrix(tmp_path, "matrix: plan\n" + profiles))
    cells, skipped = plan_cells(matrix, "out", 2, (), {})
    assert [c.label for c in cells] == ["a-r1", "b-r1", "a-r2", "b-r2"]
    assert cells[0].folder == os.path.join("out", "a-r1")
    assert skipped == ["skipped c: requires X_UNSET, which is unset"]
    cells, skipped = plan_cells(matrix, "out", 1, ("c", "a"), {"X_UNSET": "set"})
    assert [c.label for c in cells] == ["a-r1", "c-r1"] and skipped == []


def test_ports_come_from_the_range_skip_busy_ones_and_pin_the_server_block(tmp_path, monkeypatch):
    # Which real ports are free depends on the machine (a client's ephemeral port can sit in any
    # range), so this test decides which port is busy; the next one binds a real socket.
    monkeypatch.setattr(ports, "port_free", lambda port: port != 41701)
    pool = PortPool(41700, 41702)
    first, second = pool.acquire(), pool.acquire()
    assert (first, second) == (41700, 41702) and pool.acquire() is None
    pool.release(first)
    assert pool.acquire() == first
    engine = load_matrix(write_matrix(tmp_path, "matrix: p\nprofiles: [{name: a}]\n")).engine
    pinned = with_port(engine, 41700).server
    assert "41700" in pinned["start"] and pinned["url"] == "http://127.0.0.1:41700"


def test_a_port_something_listens_on_is_never_handed_out():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert not port_free(port) and PortPool(port, port).acquire() is None
    assert port_free(port)


@pytest.mark.slow


def test_unknown_profile_is_a_usage_error(tmp_path):
    matrix = write_matrix(tmp_path, "matrix: u\nprofiles: [{name: baseline}]\n")
    proc = subprocess.run(SWEEP + [matrix, "--profiles", "basline", "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "did you mean 'baseline'" in proc.stderr
