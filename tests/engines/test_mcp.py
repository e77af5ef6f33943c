"""The generic MCP engine against real MCP servers started as processes: memeval's own
(``memeval serve mcp``, stdio and streamable HTTP) and a tiny memory server written here
(``mcp_tiny.py``) whose answers can be garbage, whose tools can be missing, and which can hang."""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memeval.engines.base import Capability, MemoryItem, RecallRequest
from memeval.engines.conformance import run_checks
from memeval.engines.mcp import create
from memeval.engines.mcp.engine import McpEngine
from memeval.engines.server import free_port
from memeval.errors import EngineError, Unsupported, UsageError
from tests.conftest import MEMEVAL, ROOT

TINY = str(Path(__file__).with_name("mcp_tiny.py"))
REFERENCE = [sys.executable, "-m", "memeval.servers.mcp_reference"]
KEY = "mcp-planted-ACCESS-5d2f8e1c07"


def tiny(mode: str = "ok", *flags: str, **settings: Any) -> McpEngine:
    return create({"command": [sys.executable, TINY, mode, *flags], **settings})


def item(tenant: str, text: str, node: str = "agent:a", minute: int = 0) -> MemoryItem:
    agent = node.split(":", 1)[1] if node.startswith("agent:") else None
    return MemoryItem(tenant, node, "turn" if agent else "learning", text, agent=agent, thread="t" if agent else None,
                      at=f"2026-09-01T09:{minute:02d}:00Z")


def failed(results: list[Any]) -> dict[str, str]:
    return {r.contract: r.reason for r in results if r.status != "pass"}


@pytest.mark.slow
def test_check_engine_mcp_with_server_memeval_serve_mcp_passes() -> None:
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    done = subprocess.run([*MEMEVAL, "check-engine", "mcp", "--server", "memeval serve mcp", "--settle-s", "10"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "10 passed, 0 failed, 0 skipped" in done.stdout
    assert "FAIL" not in done.stdout


@pytest.fixture(scope="module")
def reference_http() -> Iterator[str]:
    """``memeval serve mcp --http PORT`` as a process; its endpoint URL."""
    port = free_port()
    process = subprocess.Popen([*MEMEVAL, "serve", "mcp", "--http", str(port), "--embedder", "none"], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        for _ in range(600):
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(30)


@pytest.mark.slow
def test_the_reference_server_over_streamable_http_keeps_every_contract(reference_http: str) -> None:
    engine = create({"url": reference_http})
    try:
        assert failed(run_checks(engine, settle_s=10)) == {}
        info = engine.info()
        assert info.server_version and info.server_version.startswith("memeval-reference")
        assert info.capabilities == {Capability.FORGET, Capability.ERASE}
        assert info.settings["tools"]["recall"].startswith("search(")
    finally:
        engine.close()


@pytest.mark.slow
def test_tools_are_discovered_and_the_record_says_which_serves_which_call() -> None:
    engine = tiny()
    try:
        tools = engine.info().settings["tools"]
        assert tools == {"write": "memory_store(text=content, tenant=user_id, metadata=metadata)",
                         "recall": "memory_search(query=query, tenant=user_id, limit=top_k)",
                         "list": "memory_list(tenant=user_id, limit=limit, cursor=offset)",
                         "forget": "memory_delete(id=memory_id, tenant=user_id)"}
        assert engine.info().settings["node_filter"].startswith("client")
        kept, other = item("t1", "the zircon badge opens the door"), item("t1", "zircon in learnings", "learnings")
        engine.write(kept)
        engine.write(other)
        hits = engine.recall(RecallRequest("t1", ("agent:",), "zircon", 5))
        assert [h.item for h in hits] == [kept]  # the node filter, applied here, keeps agent:a only
        assert engine.forget("t1", (kept.id,)) == 1
        assert [i.id for i in engine.page("t1").items] == [other.id]
    finally:
        engine.close()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["not-json", "not-list", "no-text", "bad-score", "bad-envelope", "error"])
def test_a_malformed_search_answer_is_an_engine_error_never_a_miss(mode: str) -> None:
    engine = tiny(mode)
    try:
        engine.write(item("t", "the zircon badge"))
        with pytest.raises(EngineError) as raised:
            engine.recall(RecallRequest("t", ("agent:",), "zircon", 5))
        assert "\n" not in str(raised.value) and "memory_search" in str(raised.value)
    finally:
        engine.close()


@pytest.mark.slow
def test_a_hung_server_is_cut_off_and_closing_stops_the_process(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    engine = create({"command": [sys.executable, TINY, "hang"], "env": {"TINY_PID_FILE": str(pid_file)},
                     "timeout_s": 2})
    pid = int(pid_file.read_text())
    with pytest.raises(EngineError, match="did not answer within 2 s"):
        engine.recall(RecallRequest("t", ("agent:",), "zircon", 5))
    engine.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.slow
def test_without_a_delete_tool_the_engine_cannot_forget_and_says_so() -> None:
    engine = tiny("ok", "--no-delete", "--no-list")
    try:
        info = engine.info()
        assert Capability.FORGET not in info.capabilities and Capability.ERASE not in info.capabilities
        assert info.settings["listing"] == "the writes this engine accepted"
        written = item("t", "the zircon badge")
        engine.write(written)
        assert [i.id for i in engine.page("t").items] == [written.id]
        with pytest.raises(Unsupported):
            engine.forget("t", (written.id,))
    finally:
        engine.close()


@pytest.mark.slow
def test_forgetting_probes_are_unsupported_through_a_server_without_delete(tmp_path: Path) -> None:
    definition = tmp_path / "tiny.yaml"
    definition.write_text(json.dumps({"engine": "tiny", "adapter": "mcp", "settings": {
        "command": [sys.executable, TINY, "ok", "--no-delete"]}}))
    out = tmp_path / "run"
    done = subprocess.run([*MEMEVAL, "run", "specs/agent-memory.yaml", "--only", "forgetting", "--engine",
                           str(definition), "--out", str(out), "--quiet"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode in (0, 1), done.stderr
    probes = json.loads((out / "run.json").read_text())["probes"]
    forgetting = [p for p in probes if "forgetting" in p["groups"]]
    assert forgetting and all(p["status"] == "unsupported" for p in forgetting)


@pytest.mark.slow
def test_a_server_that_cannot_start_is_an_engine_error() -> None:
    with pytest.raises(EngineError, match="MCP server"):
        create({"command": [sys.executable, "-c", "import sys; sys.exit(4)"], "timeout_s": 20})


@pytest.mark.parametrize("settings, message", [
    ({}, "exactly one of command"),
    ({"command": ["x"], "url": "http://127.0.0.1:1/mcp"}, "exactly one of command"),
    ({"url": "ftp://127.0.0.1/mcp"}, "http"),
    ({"command": []}, "non-empty list"),
    ({"command": ["x"], "tools": {"remember": "x"}}, "not a call"),
    ({"command": ["x"], "answers": "xml"}, "json or text"),
    ({"command": ["x"], "timeout_s": 0}, "positive"),
    ({"command": ["x"], "bogus": 1}, "unknown setting"),
    ({"url": "http://127.0.0.1:1/mcp?k=${MEMEVAL_TEST_UNSET_VAR}"}, "not set"),
])
def test_bad_settings_are_usage_errors(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        create(settings)


@pytest.fixture
def keyed_tiny(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """The tiny server over HTTP, requiring ``KEY`` in a header and in the URL; its port and log."""
    port, log = free_port(), tmp_path / "requests.jsonl"
    process = subprocess.Popen([sys.executable, TINY, "ok", "--http", str(port)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env={**os.environ, "TINY_KEY": KEY, "TINY_LOG": str(log)})
    try:
        for _ in range(600):
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except httpx.TransportError:
                assert process.poll() is None
                time.sleep(0.05)
        log.write_text("")
        yield port, log
    finally:
        process.terminate()
        process.wait(30)


def run_keyed(tmp_path: Path, port: int, key: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    definition = tmp_path / "keyed.yaml"
    definition.write_text(json.dumps({"engine": "keyed", "adapter": "mcp", "settings": {
        "url": f"http://127.0.0.1:{port}/mcp?access=${{MCP_ACCESS}}",
        "headers": {"Authorization": "Bearer ${MCP_ACCESS}"}}}))
    out = tmp_path / "run"
    done = subprocess.run([*MEMEVAL, "run", "specs/agent-memory.yaml", "--only", "brain_lookup", "--engine",
                           str(definition), "--out", str(out)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "MCP_ACCESS": key})
    return done, out


@pytest.mark.slow
def test_a_key_from_the_environment_reaches_only_the_named_host_and_no_output(tmp_path: Path,
                                                                           keyed_tiny: tuple[int, Path]) -> None:
    port, log = keyed_tiny
    done, out = run_keyed(tmp_path, port, KEY)
    assert done.returncode in (0, 1), done.stderr
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    assert requests and all(r["headers"]["authorization"] == f"Bearer {KEY}" for r in requests)
    assert {r["headers"]["host"] for r in requests} == {f"127.0.0.1:{port}"}
    record = json.loads((out / "run.json").read_text())
    assert record["engine"]["settings"]["url"].endswith("access=${MCP_ACCESS}")
    for text in (done.stdout, done.stderr, *(p.read_text() for p in out.iterdir() if p.is_file())):
        assert KEY not in text


@pytest.mark.slow
def test_a_refused_key_is_an_engine_error_that_does_not_quote_it(tmp_path: Path,
                                                                 keyed_tiny: tuple[int, Path]) -> None:
    port, _ = keyed_tiny
    wrong = "mcp-planted-WRONG-9c4e71aa30"
    done, _ = run_keyed(tmp_path, port, wrong)
    assert done.returncode == 3, done.stdout + done.stderr
    assert wrong not in done.stdout + done.stderr and "MCP server" in done.stderr


class _Logged(http.server.BaseHTTPRequestHandler):
    """Answers every request with ``self.server.reply`` (status, headers); logs what came."""

    def _answer(self) -> None:
        self.server.seen.append((self.path, dict(self.headers)))  # type: ignore[attr-defined]
        status, headers = self.server.reply  # type: ignore[attr-defined]
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_DELETE = _answer

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def logged_server(status: int, headers: dict[str, str]) -> Iterator[tuple[str, list[Any]]]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Logged)
    server.seen, server.reply = [], (status, headers)  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.seen  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()


def test_a_redirect_to_another_host_never_carries_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_ACCESS", KEY)
    with logged_server(200, {}) as (elsewhere, seen_there), \
            logged_server(307, {"Location": f"{elsewhere}/mcp"}) as (named, seen_named):
        with pytest.raises(EngineError) as raised:  # the named host sends every request to another port
            create({"url": f"{named}/mcp", "headers": {"Authorization": "Bearer ${MCP_ACCESS}"}})
    assert seen_named and all(h.get("Authorization") == f"Bearer {KEY}" for _, h in seen_named)
    assert seen_there == []
    assert KEY not in str(raised.value)
