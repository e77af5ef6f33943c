"""The viewer's HTTP server: stdlib ``ThreadingHTTPServer``, GET only, on 127.0.0.1 unless the
caller binds another host on purpose.

Routes (anything else is 404):

- ``/`` the run list, ``/api/runs`` the same as JSON (``?q= &suite= &engine= &sort= &desc=``; the
  headline KPIs, or every KPI with ``&kpis=all``);
- ``/run/KEY`` a run (``?q= &show= &group= &page= &open=``), ``/api/run/KEY/probes`` a page of
  its probes as JSON; ``/file/KEY/run.html|run.md|run.json`` the run's own files;
- ``/compare?run=KEY&run=KEY[&allow=FIELD]``, ``/leaderboard?suite=NAME``, ``/trend?label=NAME``.

A KEY is looked up in the index (:meth:`memeval.viewer.index.RunIndex.path_of`); no path taken
from a URL is ever opened, so ``..``, encoded dots, absolute paths and links out of the folder
find nothing. Requests whose Host header is not the loopback address the server listens on are
refused (a web page elsewhere cannot reach it through DNS rebinding). Every response is passed
through :func:`memeval.secrets.mask`, carries a Content-Security-Policy that fetches nothing
from elsewhere, and is never cached.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from memeval.errors import MemevalError
from memeval.record import RunRecord
from memeval.report.files import read_run
from memeval.secrets import mask
from memeval.viewer.compare_page import compare_page
from memeval.viewer.index import RunIndex
from memeval.viewer.pages import HEADLINE, ListQuery, leaderboard_page, list_page, run_json, select, trend_page
from memeval.viewer.run_page import PAGE, ProbeQuery, run_page
from memeval.viewer.run_page import select as select_probes

FILES = {"run.html": "text/html", "run.md": "text/markdown", "run.json": "application/json"}
CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
MAX_COMPARE = 12


class NotFound(Exception):
    """Nothing at that address (404)."""


class Records:
    """The last few run records read (by a page, or by the index when a run.json changed), by
    key, re-read when their file's mtime or size changes: a large run's parse is paid once."""

    def __init__(self, index: RunIndex, size: int = 4) -> None:
        self.index, self.size = index, size
        self._cache: OrderedDict[str, tuple[tuple[int, int], RunRecord]] = OrderedDict()
        self._lock = threading.Lock()
        index.on_read = self.keep

    def keep(self, key: str, stamp: tuple[int, int], record: RunRecord) -> None:
        """Hold ``record`` as the run ``key``'s at file ``stamp`` (mtime_ns, size), dropping the
        least recently used beyond the cache's size."""
        with self._lock:
            self._cache[key] = (stamp, record)
            self._cache.move_to_end(key)
            while len(self._cache) > self.size:
                self._cache.popitem(last=False)

    def held(self) -> list[str]:
        """The keys whose records are held, least recently used first."""
        with self._lock:
            return list(self._cache)

    def get(self, key: str) -> RunRecord:
        """The record of an indexed run; :class:`NotFound` for any other key."""
        path = self.index.path_of(key)
        if path is None:
            self.index.refresh()
            path = self.index.path_of(key)
        if path is None:
            raise NotFound(key)
        st = os.stat(path)
        stamp = (st.st_mtime_ns, st.st_size)
        with self._lock:
            hit = self._cache.get(key)
            if hit and hit[0] == stamp:
                self._cache.move_to_end(key)
                return hit[1]
        record = read_run(path)
        self.keep(key, stamp, record)
        return record


class Viewer:
    """What answers the requests: the index and the record cache of one runs folder."""

    def __init__(self, index: RunIndex) -> None:
        self.index = index
        self.records = Records(index)

    def warm(self) -> None:
        """Read the newest runs into the record cache (as many as it holds), so the first open
        of a recent large run does not pay for its parse; an unreadable one is left for its page."""
        for run in self.index.runs(())[:self.records.size]:
            try:
                self.records.get(run.key)
            except (NotFound, MemevalError):
                continue

    def page(self, path: str, params: dict[str, list[str]]) -> tuple[str, str]:
        """(content type, body) for a GET of ``path``; raises :class:`NotFound`."""
        if path in ("/", "/api/runs", "/leaderboard", "/trend", "/compare"):
            self.index.refresh()
        if path == "/":
            return "text/html", list_page(self.index, ListQuery.of(params))
        if path == "/api/runs":
            every = (params.get("kpis") or [""])[0] == "all"
            runs = select(self.index.runs(None if every else HEADLINE), ListQuery.of(params))
            return "application/json", json.dumps([run_json(r) for r in runs], ensure_ascii=False)
        if path == "/leaderboard":
            return "text/html", leaderboard_page(self.index, (params.get("suite") or [""])[0])
        if path == "/trend":
            return "text/html", trend_page(self.index, (params.get("label") or [""])[0])
        if path == "/compare":
            keys = list(dict.fromkeys(params.get("run", [])))[:MAX_COMPARE]
            if len(keys) < 2:
                raise NotFound("a comparison needs two runs or more (?run=KEY&run=KEY)")
            return "text/html", compare_page([(k, self.records.get(k)) for k in keys], params.get("allow", []))
        if path.startswith("/run/"):
            key = path[len("/run/"):]
            return "text/html", run_page(self.records.get(key), key, ProbeQuery.of(params))
        if path.startswith("/api/run/") and path.endswith("/probes"):
            return "application/json", self._probes(path[len("/api/run/"):-len("/probes")], params)
        if path.startswith("/file/"):
            return self._file(path[len("/file/"):])
        raise NotFound(path)

    def _probes(self, key: str, params: dict[str, list[str]]) -> str:
        chosen, query = select_probes(self.records.get(key), ProbeQuery.of(params))
        window = chosen[query.page * PAGE:(query.page + 1) * PAGE]
        return json.dumps({"matched": len(chosen), "page": query.page, "page_size": PAGE, "probes": [
            {"scenario": p.scenario, "phase": p.phase, "id": p.id, "outcomes": list(o), "question": p.question,
             "rank": p.rank, "answer": p.answer, "model_answer": p.llm_answer, "pack": p.pack} for p, o in window]},
            ensure_ascii=False)

    def _file(self, rest: str) -> tuple[str, str]:
        key, _, name = rest.rpartition("/")
        run_file = self.index.path_of(key)
        if name not in FILES or run_file is None:
            raise NotFound(rest)
        path = os.path.join(os.path.dirname(run_file), name)
        if not self.index.inside(path):
            raise NotFound(rest)
        with open(path, encoding="utf-8") as fh:
            return FILES[name], fh.read()


class Handler(BaseHTTPRequestHandler):
    """One request: routed to the server's :class:`Viewer`."""

    server: "ViewerServer"
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        if not self.server.host_allowed(self.headers.get("Host", "")):
            self._send(421, "text/plain", "this viewer answers on its loopback address only\n")
            return
        url = urlsplit(self.path)
        try:
            kind, body = self.server.viewer.page(unquote(url.path), parse_qs(url.query))
        except NotFound as err:
            self._send(404, "text/plain", f"not found: {err}\n")
        except MemevalError as err:
            self._send(400, "text/plain", f"error: {err}\n")
        except Exception as err:  # a bug must not kill the server nor show a traceback to the page
            self.log_error("error on %s: %s", self.path, err)
            self._send(500, "text/plain", "internal error; see the viewer's terminal\n")
        else:
            self._send(200, kind, body)

    def _send(self, status: int, kind: str, body: str) -> None:
        data = mask(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the stdlib's name)
        if self.server.verbose:
            super().log_message(format, *(mask(str(a)) for a in args))


class ViewerServer(ThreadingHTTPServer):
    """The viewer's server over one runs folder; ``port`` 0 picks a free port (see :attr:`url`)."""

    daemon_threads = True

    def __init__(self, root: str, host: str = "127.0.0.1", port: int = 0, verbose: bool = False) -> None:
        self.index = RunIndex(root)
        self.viewer = Viewer(self.index)
        self.verbose = verbose
        super().__init__((host, port), Handler)
        self.loopback_only = host in ("127.0.0.1", "localhost", "::1")

    @property
    def url(self) -> str:
        """The address to open: ``http://127.0.0.1:PORT/``."""
        host, port = str(self.server_address[0]), self.server_address[1]
        return f"http://{host if ':' not in host else f'[{host}]'}:{port}/"

    def host_allowed(self, host: str) -> bool:
        """Whether a request's Host header names this server on loopback (any host when the
        server was bound beyond loopback on purpose)."""
        if not self.loopback_only:
            return True
        port = self.server_address[1]
        return host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}")

    def server_close(self) -> None:
        super().server_close()
        self.index.close()


@contextmanager
def running(root: str) -> Iterator[ViewerServer]:
    """A viewer server over ``root`` on a free loopback port, serving in a thread until the block
    ends (for tests, benchmarks and embedding; ``memeval view`` serves in the foreground)."""
    srv = ViewerServer(root)
    thread = threading.Thread(target=srv.serve_forever, name="memeval-view", daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        thread.join()
        srv.server_close()
