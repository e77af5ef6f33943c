"""Start memeval's loopback servers as real subprocesses and learn their URLs.

Tests, engine definitions and flag sweeps use this instead of spawning processes themselves::

    from memeval.servers.launch import start_server

    with start_server("fake_cortex", ["--index-delay", "0.1"], env={"CORTEX_BITEMPORAL_MODE": "off"}) as cortex:
        httpx.get(f"{cortex.url}/v1/admin/health")

    mock = start_server("mock_inference")
    ...
    mock.stop()

What :func:`start_server` does:

1. runs ``sys.executable -m memeval.servers.<kind> --port 0 <args>`` (``--port 0`` is left out
   when ``args`` names a port). ``kind`` is ``fake_cortex`` or ``mock_inference`` (hyphens
   allowed);
2. gives the child this process's environment with ``env`` laid over it. Inherited CortexDB
   flag variables (``CORTEX_*`` except ``CORTEX_API_KEY``) are dropped first unless
   ``inherit_flags`` is true, so a sweep profile is exactly the ``env`` passed;
3. reads the child's ``<name> listening on <url>`` line from its stdout, then polls the
   server's fault-control route (never faulted, not counted in call stats, so start-up does
   not use up injected faults) until it answers over HTTP, all within ``timeout`` seconds
   (default 10);
4. returns a :class:`RunningServer`; on any failure it kills the child and raises
   :class:`memeval.errors.EngineError` carrying the tail of the child's stderr.

A server started with ``--data FILE`` can be :meth:`~RunningServer.kill`-ed and started again
with the same arguments to prove state survives a crash; the new one listens on a new port.
"""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import IO, Any

import httpx

from memeval.errors import EngineError, UsageError
from memeval.servers.fake_cortex.config import flags_from_env

# a control route per kind: answered in every mode, never faulted, not counted in stats
KINDS = {"fake_cortex": "/v1/_fake/faults", "mock_inference": "/_mock/faults"}
_LISTENING = re.compile(r" listening on (http://\S+)")


class RunningServer:
    """A started server process. ``url`` is ``http://127.0.0.1:<port>`` without a trailing slash."""

    def __init__(self, kind: str, url: str, process: subprocess.Popen[str], stderr: IO[str]):
        self.kind = kind
        self.url = url
        self.process = process
        self._stderr = stderr

    @property
    def pid(self) -> int:
        return self.process.pid

    def faults(self, **body: Any) -> dict[str, Any]:
        """Set fault knobs on the live server through its control route; returns their state.

        Raises:
            httpx.HTTPStatusError: the server refused the knobs.
        """
        reply = httpx.post(f"{self.url}{KINDS[self.kind]}", json=body, timeout=5)
        reply.raise_for_status()
        state: dict[str, Any] = reply.json()
        return state

    def stop(self, timeout: float = 5.0) -> int:
        """SIGTERM, wait up to ``timeout`` seconds for a clean exit, else SIGKILL; the exit code."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._stderr.close()
        return self.process.returncode

    def kill(self) -> None:
        """SIGKILL at once (a crash: no clean shutdown, nothing flushed) and reap the process."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self._stderr.close()

    def stderr_tail(self, chars: int = 2000) -> str:
        """The last ``chars`` characters the process wrote to stderr (empty once stopped)."""
        if self._stderr.closed:
            return ""
        self._stderr.seek(0)
        return self._stderr.read()[-chars:]

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


def child_env(env: Mapping[str, str] | None, inherit_flags: bool, base: Mapping[str, str]) -> dict[str, str]:
    """The child's environment: ``base`` (minus CortexDB flags unless inherited), then ``env``."""
    dropped = set() if inherit_flags else set(flags_from_env(base))
    merged = {k: v for k, v in base.items() if k not in dropped}
    merged.update(env or {})
    merged["PYTHONUNBUFFERED"] = "1"
    return merged


def start_server(
    kind: str,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    *,
    timeout: float = 10.0,
    inherit_flags: bool = False,
) -> RunningServer:
    """Start a server subprocess and wait until it serves HTTP; see the module docstring.

    Raises:
        UsageError: an unknown ``kind``.
        EngineError: the process exited, printed no URL or did not answer within ``timeout``.
    """
    module = kind.replace("-", "_")
    if module not in KINDS:
        raise UsageError(f"unknown server kind {kind!r}; expected one of {', '.join(KINDS)}")
    names_port = any(a == "--port" or a.startswith("--port=") for a in args)
    command = [sys.executable, "-m", f"memeval.servers.{module}", *([] if names_port else ["--port", "0"]), *args]
    stderr = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=stderr, text=True, env=child_env(env, inherit_flags, os.environ)
    )
    deadline = time.monotonic() + timeout
    server = RunningServer(module, "", process, stderr)
    try:
        server.url = _await_url(process, deadline)
        _await_http(server.url + KINDS[module], process, deadline)
    except EngineError as err:
        tail = server.stderr_tail().strip()
        server.kill()
        raise EngineError(f"{kind} did not start: {err}" + (f"; stderr: {tail}" if tail else "")) from None
    return server


def _pump(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def _await_url(process: subprocess.Popen[str], deadline: float) -> str:
    assert process.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_pump, args=(process.stdout, lines), daemon=True).start()
    while True:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise EngineError("no 'listening on' line in time") from None
        if line is None:
            raise EngineError(f"process exited with code {process.wait()}")
        match = _LISTENING.search(line)
        if match:
            return match.group(1).rstrip("/")


def _await_http(url: str, process: subprocess.Popen[str], deadline: float) -> None:
    while True:
        try:
            httpx.get(url, timeout=1.0)
            return
        except httpx.TransportError as err:
            if process.poll() is not None:
                raise EngineError(f"process exited with code {process.returncode}") from None
            if time.monotonic() > deadline:
                raise EngineError(f"no HTTP answer from {url}: {err}") from None
            time.sleep(0.05)
