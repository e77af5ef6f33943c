"""The viewer's server on a real loopback socket over real runs: every route answers, no file
outside the runs folder is served (``..``, encoded dots, absolute paths, links out of the
folder), a foreign Host is refused, a secret learned after the run never reaches a page, and
``memeval view`` as a process prints its address, serves and stops cleanly."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from memeval import secrets
from memeval.comparison.setup import differences
from memeval.report.files import read_run
from memeval.viewer import pages
from memeval.viewer.run_page import PAGE
from memeval.viewer.server import ViewerServer
from tests.conftest import MEMEVAL
from tests.viewer.conftest import Runs, serving

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(runs: Runs) -> Iterator[ViewerServer]:
    with serving(runs.root) as srv:
        yield srv


def get(srv: ViewerServer, path: str, host: str | None = None) -> tuple[int, str, dict[str, str]]:
    """GET ``path`` exactly as written (no client-side normalisation of ``..``)."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.server_address[1], timeout=120)
    conn.putrequest("GET", path, skip_host=True)
    conn.putheader("Host", host or f"127.0.0.1:{srv.server_address[1]}")
    conn.endheaders()
    resp = conn.getresponse()
    body = resp.read().decode("utf-8")
    conn.close()
    return resp.status, body, {k.lower(): v for k, v in resp.getheaders()}


def test_list_json_and_html(server: ViewerServer, runs: Runs) -> None:
    status, body, headers = get(server, "/api/runs")
    assert status == 200 and headers["content-type"].startswith("application/json")
    listed = {r["key"]: r for r in json.loads(body)}
    assert set(listed) == {*runs.alpha, runs.bm25, runs.other, runs.hostile}
    hit = next(k for k in listed[runs.bm25]["kpis"] if k["name"] == "pack hit (synthesis)")
    assert hit["n"] > 0 and hit["ci95"] and hit["ci95"][0] <= hit["value"] <= hit["ci95"][1]
    _, body, _ = get(server, "/api/runs?q=bm25")
    assert [r["key"] for r in json.loads(body)] == [runs.bm25]
    _, body, _ = get(server, "/api/runs?sort=hit&desc=0")
    values = [next(k["value"] for k in r["kpis"] if k["name"] == "pack hit (synthesis)") for r in json.loads(body)]
    assert values == sorted(values)
    status, page, headers = get(server, "/")
    assert status == 200 and "default-src 'none'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff" and headers["cache-control"] == "no-store"
    assert page.count('name="run" value=') == 5 and "95%" not in page.split("<table")[0]


def test_list_is_paged(server: ViewerServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pages, "LIST_PAGE", 2)
    _, first, _ = get(server, "/")
    _, last, _ = get(server, "/?page=2&sort=label&desc=0")
    assert first.count('name="run" value=') == 2 and "page 1 of 3" in first
    assert last.count('name="run" value=') == 1 and "page 3 of 3" in last and 'value="other/r1"' in last
    _, beyond, _ = get(server, "/?page=99")
    assert "page 3 of 3" in beyond  # a page past the end shows the last one


def test_run_page_is_paged_searched_and_opens_a_probe(server: ViewerServer, runs: Runs) -> None:
    key = runs.alpha[0]
    status, body, _ = get(server, f"/api/run/{key}/probes")
    data = json.loads(body)
    assert status == 200 and data["page_size"] == PAGE and len(data["probes"]) == min(PAGE, data["matched"])
    last = data["probes"][-1]
    _, found, _ = get(server, f"/api/run/{key}/probes?q={last['question'].split()[-1].strip('?')}")
    assert any(p["id"] == last["id"] for p in json.loads(found)["probes"])
    _, page, _ = get(server, f"/run/{key}?open={last['id']}")
    assert f'data-probe="{last["id"]}"' in page and "<h2>Unsupported by the engine</h2>" in page
    _, grouped, _ = get(server, f"/run/{key}?group=miss")
    assert '<h3 class="group">pass</h3>' in grouped
    assert get(server, f"/file/{key}/run.md")[0] == 200


def test_comparison_and_refusal(server: ViewerServer, runs: Runs) -> None:
    status, page, _ = get(server, f"/compare?run={runs.alpha[0]}&run={runs.bm25}")
    assert status == 200 and "<h2>KPIs</h2>" in page and "packs side by side" in page
    assert 'class="left"' in page or 'class="entered"' in page  # a flipped probe's pack changed
    _, same, _ = get(server, f"/compare?run={runs.alpha[0]}&run={runs.alpha[1]}")
    assert "alpha@" in same  # two runs of one label are two sides, not repeats of one
    status, refused, _ = get(server, f"/compare?run={runs.alpha[0]}&run={runs.other}")
    fields = differences(read_run(os.path.join(runs.root, runs.alpha[0], "run.json")),
                         read_run(os.path.join(runs.root, runs.other, "run.json")))
    assert status == 200 and "Not comparable" in refused and "compare them anyway" in refused
    assert fields and all(f"<code>{field}</code>" in refused for field in fields)  # every differing field named
    allow = refused.split('href="?')[1].split('"')[0].replace("&amp;", "&")
    status, allowed, _ = get(server, "/compare?" + allow)
    assert status == 200 and "Not comparable" not in allowed and "<h2>KPIs</h2>" in allowed


def test_leaderboard_and_trend(server: ViewerServer, runs: Runs) -> None:
    status, board, _ = get(server, "/leaderboard?suite=agent-memory")
    assert status == 200 and board.count('<tr class="frontier">') >= 1 and "<svg" in board
    status, trend, _ = get(server, "/trend?label=alpha")
    assert status == 200 and trend.count('class="run"') == 4  # two runs × (pack hit, answer)
    assert "vs previous" in trend


@pytest.mark.parametrize("path", [
    "/run/../../../../etc/passwd", "/run/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/run/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
    "/run//etc/passwd", "/run/alpha/r1/../../../../etc/passwd", "/file/alpha/r1/../../../../etc/passwd",
    "/file/alpha/r1/%2e%2e%2f%2e%2e%2fhostile.yaml", "/file/alpha/r1/checkpoint.jsonl", "/file//etc/passwd",
    "/etc/passwd", "/../../etc/passwd", "/api/run/..%2f..%2f..%2fetc/probes", "/run/linked-out", "/file/linked-out/run.json",
    "/run/.memeval-view.sqlite", "/.memeval-view.sqlite",
])
def test_nothing_outside_the_folder_is_served(server: ViewerServer, runs: Runs, path: str) -> None:
    out = Path(runs.root).parent / "outside-run"
    if not out.exists():
        out.mkdir()
        (out / "run.json").write_bytes((Path(runs.root) / runs.alpha[0] / "run.json").read_bytes())
        os.symlink(out, Path(runs.root) / "linked-out", target_is_directory=True)
    status, body, _ = get(server, path)
    assert status == 404, (path, body[:200])
    assert "root:" not in body


def test_the_newest_runs_are_read_ahead(runs: Runs) -> None:
    with serving(runs.root) as srv:
        assert srv.viewer.records.held() == []  # nothing is parsed before warm()
        srv.viewer.warm()
        newest = [r.key for r in srv.index.runs(())][:srv.viewer.records.size]
        assert sorted(srv.viewer.records.held()) == sorted(newest)


def test_foreign_host_is_refused(server: ViewerServer) -> None:
    assert get(server, "/", host="attacker.example:80")[0] == 421
    assert get(server, "/", host=f"localhost:{server.server_address[1]}")[0] == 200


def test_a_secret_never_reaches_a_page(server: ViewerServer, runs: Runs, monkeypatch: pytest.MonkeyPatch) -> None:
    _, page, _ = get(server, f"/run/{runs.hostile}?q=Harbour")
    planted = "12 Harbour Street"
    assert planted in page
    monkeypatch.setattr(secrets, "_known", set(secrets._known))  # forgotten again after this test
    secrets.remember([planted])  # learned after the run was written: the viewer still masks it
    for path in (f"/run/{runs.hostile}", f"/api/run/{runs.hostile}/probes", f"/file/{runs.hostile}/run.json"):
        assert planted not in get(server, path)[1], path


def test_memeval_view_as_a_process(runs: Runs, tmp_path: Path) -> None:
    proc = subprocess.Popen([*MEMEVAL, "view", runs.root, "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        lines = [proc.stdout.readline() for _ in range(2)] if proc.stdout else []
        assert lines[0].startswith("indexed 5 run(s)"), lines
        url = lines[1].split("listening on ")[1].split()[0]
        assert url.startswith("http://127.0.0.1:")
        host, port = url.removeprefix("http://").rstrip("/").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=120)
        conn.request("GET", "/")
        assert conn.getresponse().status == 200
        conn.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    bad = subprocess.run([*MEMEVAL, "view", str(tmp_path / "missing")], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "not a folder of runs" in bad.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = subprocess.run([*MEMEVAL, "view", runs.root, "--port", str(taken.getsockname()[1])],
                              capture_output=True, text=True, timeout=120)
    assert busy.returncode == 3 and "cannot listen on 127.0.0.1:" in busy.stderr
