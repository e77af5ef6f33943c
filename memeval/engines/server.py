"""Start and stop the server an engine definition describes (its ``server:`` block).

::

    with start_engine_server(engine_def, env_overrides={"CORTEX_BITEMPORAL_MODE": "off"},
                             log_path="runs/x/server.log") as url:
        engine = engine_def.create({"url": url})

:func:`start_engine_server` picks a free loopback port, substitutes ``{port}`` and ``{python}``
(this interpreter) in ``start``, ``stop``, ``ready``, ``url`` and the ``env`` values, starts
``start`` in its own process group (working directory ``cwd``, relative to the definition
file; default the current one) with this process's environment, then ``env``, then
``env_overrides``; stdout and stderr go to ``log_path`` (appended; a temporary file when None).
It polls ``url + ready`` until a 2xx answer (``ready_timeout_s``, default 60 s) and yields the
URL. On leaving, always, it runs ``stop`` when given (at most 120 s), then terminates the
process group (SIGTERM, 10 s, then SIGKILL) and reaps the process.

:func:`engine_server` is what ``memeval run`` uses: it starts the server only when the
definition has one and the adapter's URL variable is unset, and yields settings overrides.
The variable is the adapter's declared ``Adapter.url_env`` (:mod:`memeval.engines.base`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import secrets
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from typing import IO, Any
from urllib.parse import urlsplit

from memeval.engines import adapters, load_adapter
from memeval.engines.definition import EngineDef
from memeval.errors import EngineError, UsageError
from memeval.secrets import mask
from memeval.util.nonce import NONCE_ENV, NONCE_HEADER

DEFAULT_READY_TIMEOUT_S = 60.0
READY_POLL_S = 0.1
STOP_TIMEOUT_S = 120.0
TERM_GRACE_S = 10.0
TAIL_CHARS = 1500
PUMP_JOIN_S = 2.0


@contextlib.contextmanager
def engine_server(engine_def: EngineDef, log_path: str | None = None) -> Iterator[dict[str, Any]]:
    """Settings overrides for a run: ``{"url": ...}`` of a server started from the definition,
    or ``{}`` when it has no ``server:`` block, or when its adapter's ``url_env`` is set (an
    already running server). Raises what :func:`start_engine_server` raises."""
    url_env = adapter_url_env(engine_def.adapter)
    if engine_def.server is None or (url_env and os.environ.get(url_env)):
        yield {}
        return
    with start_engine_server(engine_def, log_path=log_path) as url:
        yield {"url": url}


def adapter_concurrent(adapter: str) -> bool:
    """Whether the adapter declares its engines safe across threads (False when it is not installed)."""
    return adapter in adapters() and load_adapter(adapter).concurrent


def adapter_url_env(adapter: str) -> str | None:
    """The ``url_env`` the adapter declares, or None (also when no such adapter is installed:
    creating the engine then says so)."""
    if adapter not in adapters():
        return None
    return load_adapter(adapter).url_env


@contextlib.contextmanager
def start_engine_server(engine_def: EngineDef, env_overrides: Mapping[str, str] | None = None,
                        log_path: str | None = None) -> Iterator[str]:
    """Run the definition's server for the ``with`` block; yields its base URL (no trailing ``/``).

    Raises:
        UsageError: the definition has no ``server:`` block.
        EngineError: the server could not start, exited, or was not ready in time (the reason
            carries the tail of its log).
    """
    server = engine_def.server
    if server is None:
        raise UsageError(f"engine {engine_def.name} has no server: block")
    port = free_port()
    values = {"port": str(port), "python": sys.executable}
    url = _fill(server.get("url", "http://127.0.0.1:{port}"), values).rstrip("/")
    nonce = secrets.token_hex(8)
    env = {**os.environ, **{k: _fill(v, values) for k, v in server.get("env", {}).items()}, **(env_overrides or {}),
           NONCE_ENV: nonce}
    cwd = _cwd(engine_def.file, server)
    _check_port_free(url)
    with _log_file(log_path) as log:
        argv = [_fill(a, values) for a in server["start"]]
        process, pump = _spawn(argv, cwd, env, log)
        try:
            if server.get("ready"):
                _await_ready(url + _fill(server["ready"], values), nonce, process, pump, log,
                             float(server.get("ready_timeout_s", DEFAULT_READY_TIMEOUT_S)))
            yield url
        finally:
            _stop(process, pump, [_fill(a, values) for a in server.get("stop", [])], cwd, env, log)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _fill(text: str, values: Mapping[str, str]) -> str:
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text


def _cwd(definition_file: str | None, server: Mapping[str, Any]) -> str | None:
    if not server.get("cwd"):
        return None
    folder = os.path.dirname(os.path.abspath(definition_file)) if definition_file else os.getcwd()
    return os.path.normpath(os.path.join(folder, server["cwd"]))


@contextlib.contextmanager
def _log_file(path: str | None) -> Iterator[IO[str]]:
    if path is None:
        with tempfile.TemporaryFile("w+") as handle:
            yield handle
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    try:  # never through a symbolic link: it would write wherever the link points
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as err:
        raise UsageError(f"{path}: cannot be the server log ({err.strerror}; a symbolic link is refused)") from None
    with open(fd, "a+", encoding="utf-8") as handle:
        yield handle


_log_lock = threading.Lock()


def _log_line(log: IO[str], text: str) -> None:
    """One line into the server log, secrets masked (a server may print its key or a database URL)."""
    with _log_lock:
        log.write(mask(text.rstrip("\n")) + "\n")
        log.flush()


def _pump(stream: IO[bytes], log: IO[str]) -> None:
    with contextlib.suppress(ValueError, OSError):  # the log closed under a child that kept the pipe
        for raw in iter(stream.readline, b""):
            _log_line(log, raw.decode("utf-8", errors="replace"))
    stream.close()


def _spawn(argv: list[str], cwd: str | None, env: Mapping[str, str],
           log: IO[str]) -> tuple[subprocess.Popen[bytes], threading.Thread]:
    """The server process, its output copied line by line (masked) into ``log`` by the thread."""
    _log_line(log, f"# memeval: starting {' '.join(argv)}")
    try:
        process = subprocess.Popen(argv, cwd=cwd, env=dict(env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as err:
        raise EngineError(f"engine server {argv[0]!r} cannot start: {err}") from None
    assert process.stdout is not None
    pump = threading.Thread(target=_pump, args=(process.stdout, log), name="memeval-server-log", daemon=True)
    pump.start()
    _log_line(log, f"# memeval: server pid {process.pid}")
    return process, pump


def _check_port_free(url: str) -> None:
    """Refuse to start a server on a loopback port something already listens on: the ready
    check (and then the run) would talk to that other server."""
    parts = urlsplit(url)
    if parts.hostname in ("127.0.0.1", "localhost") and parts.port is not None and not port_free(parts.port):
        raise EngineError(f"engine server: port {parts.port} is already in use; not starting a server "
                          "whose place another one holds")


def port_free(port: int) -> bool:
    """Whether nothing listens on 127.0.0.1:``port`` (connections left in TIME_WAIT do not count:
    the servers memeval starts bind with ``SO_REUSEADDR``)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _await_ready(url: str, nonce: str, process: subprocess.Popen[bytes], pump: threading.Thread, log: IO[str],
                 timeout_s: float) -> None:
    """Wait until ``url`` answers 2xx from *this* process: a server that reports a nonce
    (``X-Memeval-Nonce``, from ``MEMEVAL_SERVER_NONCE``) must report ours; one that reports none
    must still be running once it answers (the limit for servers that know no nonce).

    Raises:
        EngineError: it exited, another server answered, or it was not ready in time.
    """
    import httpx  # here, not at the top: every memeval command imports this module, few start a server

    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while True:
        if process.poll() is not None:
            pump.join(PUMP_JOIN_S)
            raise EngineError(f"engine server exited with code {process.returncode} before ready{_tail(log)}")
        try:
            answer = httpx.get(url, timeout=2.0)
            status = answer.status_code
            if 200 <= status < 300:
                _check_ours(url, answer.headers.get(NONCE_HEADER), nonce, process)
                return
            last = f"HTTP {status}"
        except httpx.TransportError as err:
            last = type(err).__name__
        if time.monotonic() > deadline:
            raise EngineError(f"engine server not ready at {url} after {timeout_s:g} s ({last}){_tail(log)}")
        time.sleep(READY_POLL_S)


def _check_ours(url: str, reported: str | None, nonce: str, process: subprocess.Popen[bytes]) -> None:
    if reported is not None and reported != nonce:
        raise EngineError(f"engine server: {url} is answered by another server (its nonce is not ours); "
                          "two runs or sweeps share a port")
    if process.poll() is not None:
        raise EngineError(f"engine server exited with code {process.returncode}, yet {url} answers: "
                          "another server holds the port")


def _stop(process: subprocess.Popen[bytes], pump: threading.Thread, stop: list[str], cwd: str | None,
          env: Mapping[str, str], log: IO[str]) -> None:
    if stop:
        try:
            done = subprocess.run(stop, cwd=cwd, env=dict(env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, timeout=STOP_TIMEOUT_S, check=False)
            for line in done.stdout.decode("utf-8", errors="replace").splitlines():
                _log_line(log, line)
        except (OSError, subprocess.TimeoutExpired) as err:
            _log_line(log, f"# memeval: stop command failed: {err}")
    if process.poll() is None:
        _signal_group(process, signal.SIGTERM)
        try:
            process.wait(TERM_GRACE_S)
        except subprocess.TimeoutExpired:
            _signal_group(process, signal.SIGKILL)
    process.wait()
    pump.join(PUMP_JOIN_S)
    _log_line(log, f"# memeval: server exited with code {process.returncode}")


def _signal_group(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


def _tail(log: IO[str]) -> str:
    with _log_lock:
        log.flush()
        log.seek(0)
        text = " ".join(log.read()[-TAIL_CHARS:].split())
    return f"; log: {text}" if text else ""
