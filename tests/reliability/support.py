"""Shared pieces of the reliability tests: the fake CortexDB as a process, ``memeval run`` as a
process, what the fake holds, a connection-dropping proxy, and the run.json normaliser."""

from __future__ import annotations

import http.client
import json
import os
import socket
import socketserver
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

from memeval.engines.cortex.layout import APP, ITEM_LABEL
from memeval.report.files import read_run
from memeval.servers.launch import RunningServer, start_server
from tests.conftest import MEMEVAL, ROOT

HERE = Path(__file__).resolve().parent
THREE = str(HERE / "fixtures" / "three.yaml")
CORTEX = os.path.join(ROOT, "engines", "cortex.yaml")
FAKE_DEF = os.path.join(ROOT, "engines", "fake-cortex.yaml")  # memeval starts and stops the fake itself
KEY = "sk-rel-fake-cortex-key"
FAST = ["--index-delay", "0.05", "--enrich-delay", "0.005"]


# -- the fake CortexDB -------------------------------------------------------------------------

def start_fake(**env: str) -> RunningServer:
    """The fake CortexDB as a process with fast indexing, taking ``KEY``; ``env`` laid over."""
    return start_server("fake_cortex", FAST, env={"CORTEX_API_KEY": KEY, **env})


def scopes(url: str, key: str = KEY) -> list[str]:
    """Every scope that holds an event, visible or not (the fake lists scopes from all events)."""
    reply = httpx.get(f"{url}/v1/scopes/list", params={"prefix": APP, "limit": 1000},
                      headers={"Authorization": f"Bearer {key}"}, timeout=5)
    reply.raise_for_status()
    return [s["path"] for s in reply.json()["items"]]


def run_scopes(url: str, run_id: str, key: str = KEY) -> list[str]:
    """The scopes holding events of one run's tenants (``eval-<run_id>-…``)."""
    return [s for s in scopes(url, key) if s.startswith(f"{APP}/project:eval-{run_id}-")]


def events(url: str, scope: str, key: str = KEY) -> list[dict[str, Any]]:
    """A scope's visible events, each once (the fake lists every event twice)."""
    seen: dict[str, dict[str, Any]] = {}
    cursor = None
    while True:
        params = {"scope": scope, "limit": 1000, **({"cursor": cursor} if cursor else {})}
        body = httpx.get(f"{url}/v1/events", params=params, headers={"Authorization": f"Bearer {key}"},
                         timeout=5).json()
        for event in body["items"]:
            seen.setdefault(event["id"], event)
        cursor = body.get("next_cursor")
        if not body.get("has_more"):
            return list(seen.values())


def item_counts(url: str, scope_paths: Sequence[str], key: str = KEY) -> Counter[str]:
    """How many distinct events each memeval item (its ``tm:i:`` label) has across the scopes."""
    counts: Counter[str] = Counter()
    for scope in scope_paths:
        for event in events(url, scope, key):
            label = next(lbl for lbl in event["context"]["labels"] if lbl.startswith(ITEM_LABEL))
            counts[label] += 1
    return counts


def erase_all(url: str, key: str = KEY) -> None:
    """Erase every memeval scope on the fake (a test's own cleanup when it used --keep)."""
    for scope in scopes(url, key):
        httpx.post(f"{url}/v1/erasures", json={"scope": scope, "confirm_all": True},
                   headers={"Authorization": f"Bearer {key}"}, timeout=5).raise_for_status()


# -- memeval run as a process ------------------------------------------------------------------

def run_env(url: str | None, key: str = KEY, **extra: str) -> dict[str, str]:
    """The environment of a ``memeval run`` against the fake at ``url``; with ``url`` None, of
    a run on ``FAKE_DEF`` that starts the fake itself (both the fake and the adapter get ``key``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CORTEX_", "EVAL_LLM_", "OPENROUTER_"))}
    server = {"CORTEX_DB_URL": url} if url is not None else {"CORTEX_API_KEY": key}
    return {**env, **server, "CORTEX_DB_KEY": key, "PYTHONUNBUFFERED": "1", **extra}


def run_args(out: Path | None, *extra: str, suite: str = THREE) -> list[str]:
    """``memeval run`` of ``suite`` on the cortex adapter, to ``--out out`` unless None."""
    folder = ["--out", str(out)] if out is not None else []
    return [*MEMEVAL, "run", suite, "--engine", CORTEX, *folder, "--quiet", "--enrich-wait", "0", *extra]


def memeval_run(out: Path, env: Mapping[str, str], *extra: str,
                timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``memeval run`` the three-scenario suite to ``out``, to the end."""
    return subprocess.run(run_args(out, *extra), env=dict(env), capture_output=True, text=True, timeout=timeout,
                          cwd=str(out.parent))


def memeval_resume(folder: Path, env: Mapping[str, str], *extra: str,
                   cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``memeval run … --resume folder`` (no ``--out``: the folder is the run's), in ``cwd``
    (default: beside ``folder``)."""
    args = run_args(None, "--resume", str(folder), *extra)
    return subprocess.run(args, env=dict(env), capture_output=True, text=True, timeout=60,
                          cwd=str(cwd or folder.parent))


def start_run(out: Path | None, env: Mapping[str, str], *extra: str, cwd: Path | None = None) -> subprocess.Popen[str]:
    """``memeval run`` in the background (stdout and stderr piped), in ``cwd`` (default: beside ``out``)."""
    where = cwd or (out.parent if out is not None else None)
    return subprocess.Popen(run_args(out, *extra), env=dict(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=str(where) if where else None)


def journal(out: Path) -> list[dict[str, Any]]:
    """The complete lines of ``out/checkpoint.jsonl`` so far."""
    try:
        text = (out / "checkpoint.jsonl").read_text()
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in text.splitlines(keepends=True) if line.endswith("\n")]


def wait_for(condition: Callable[[], Any], what: str, timeout: float = 20, proc: subprocess.Popen[str] | None = None,
             poll: float = 0.01) -> Any:
    """Poll ``condition`` until it is truthy; its value. Fails after ``timeout`` s or if ``proc`` ends."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the run ended (exit {proc.returncode}) before {what}: {proc.communicate()[1]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(poll)


def run_id_of(out: Path) -> str:
    """The run id in the journal's header (it names the run's engine tenants)."""
    return str(journal(out)[0]["run_id"])


def finished(out: Path, scenario: str) -> bool:
    return any(e["kind"] == "finished" and e["scenario"]["id"] == scenario for e in journal(out))


def started_tenants(out: Path, scenario: str) -> dict[str, str] | None:
    for entry in journal(out):
        if entry["kind"] == "started" and entry["scenario"] == scenario:
            return dict(entry["tenants"])
    return None


def record(out: Path) -> dict[str, Any]:
    """``out/run.json``, read as memeval reads a run record, as its JSON."""
    return read_run(str(out / "run.json")).to_json()


# -- comparing runs ----------------------------------------------------------------------------

VOLATILE = frozenset({"ms", "created_at", "latency", "timings", "settle_ms"})


def normalise(run: dict[str, Any]) -> dict[str, Any]:
    """run.json without what differs between two honest runs of the same suite on the same
    server: times (``ms``, ``settle_ms``, ``created_at``, ``timings``, ``latency``), latency KPIs,
    and the run id (it names the engine tenants)."""
    run_id = run["run_id"]

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items() if k not in VOLATILE}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value.replace(run_id, "<run>") if isinstance(value, str) else value

    kept = walk(run)
    kept["kpis"] = [k for k in kept["kpis"] if k["group"] != "latency"]
    return kept


# -- a proxy that drops connections after the server acted -------------------------------------

class DroppingProxy:
    """An HTTP/1.1 proxy on 127.0.0.1 in front of ``upstream``. Of the requests whose request
    line starts with ``prefix``, every other one (the 1st, 3rd, … up to ``drops`` of them) is
    forwarded, its whole answer read, and then the client's connection closed without sending
    it: the server acted, the client cannot know. The resend in between goes through, so each
    dropped request is a different one. ``dropped`` counts the drops."""

    def __init__(self, upstream: str, prefix: str, drops: int):
        host, port = upstream.removeprefix("http://").split(":")
        self.upstream, self.prefix, self.drops, self.dropped, self._seen = (host, int(port)), prefix, drops, 0, 0
        self._lock = threading.Lock()
        proxy = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                proxy._serve(self.rfile, self.connection)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _take_drop(self, line: str) -> bool:
        with self._lock:
            if not line.startswith(self.prefix):
                return False
            self._seen += 1
            if self._seen % 2 == 1 and self.dropped < self.drops:
                self.dropped += 1
                return True
        return False

    def _serve(self, rfile: Any, conn: socket.socket) -> None:
        upstream = http.client.HTTPConnection(*self.upstream, timeout=30)
        try:
            while True:
                line = rfile.readline().decode("latin-1")
                if not line.strip():
                    return
                method, target, _ = line.split(" ", 2)
                headers = http.client.parse_headers(rfile)
                body = rfile.read(int(headers.get("Content-Length") or 0))
                upstream.request(method, target, body=body,
                                 headers={k: v for k, v in headers.items() if k.lower() != "connection"})
                answer = upstream.getresponse()
                payload = answer.read()
                if self._take_drop(line):
                    conn.shutdown(socket.SHUT_RDWR)
                    return
                head = [f"HTTP/1.1 {answer.status} {answer.reason}"]
                head += [f"{k}: {v}" for k, v in answer.getheaders()
                         if k.lower() not in ("connection", "transfer-encoding", "content-length")]
                head += [f"Content-Length: {len(payload)}", "", ""]
                conn.sendall("\r\n".join(head).encode("latin-1") + payload)
        except (OSError, ValueError):
            return
        finally:
            upstream.close()
