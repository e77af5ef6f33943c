"""Speed of ``memeval view``: the run list over many runs and the page of a large benchmark run.

    python benchmarks/bench_view.py                                 # 1,000 runs; a 2,000-question run
    python benchmarks/bench_view.py --runs 200 --questions 300 --n 10   # a quick look

Builds, in a temporary folder:

- ``--runs`` runs: one real ``memeval run specs/agent-memory.yaml --only brain_lookup``, then
  that record written again under other labels, run ids and dates (its numbers unchanged), as a
  team's runs/ folder fills up over months;
- one real run of ``--questions`` questions: a synthetic LongMemEval-format file (``memeval
  generate``'s generator, small haystacks) run as a ``dataset:`` suite on the reference engine
  without a model.

Then, against a real viewer server on 127.0.0.1 (requests over HTTP, bodies read whole), prints
p50 / p95 / max wall time in ms over ``--n`` requests of:

- ``index build``: the first :meth:`RunIndex.refresh` over the folder (every run.json read once);
- ``list /``: the run list page, ``list /api/runs``: the same as JSON (each request re-checks the
  folder: one stat per run.json, nothing re-read; target: well under 1 s at 1,000 runs);
- ``run page cold``: a 2,000-question run's page in a fresh server (the run.json read and parsed),
  ``run page warm``: the same page again (the record held), ``run page 10``: its tenth page of
  probes, ``probes JSON``: one page of probes as JSON (target: about 2 s for the page).
"""

from __future__ import annotations

import argparse
import dataclasses
import http.client
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from memeval.cli import main as memeval_main
from memeval.report.files import read_run
from memeval.viewer.server import ViewerServer
from memeval.viewer.server import running as serving

from bench_stats import timed  # a sibling script: python puts this folder on the path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BM25_ENGINE = os.path.join(ROOT, "engines", "reference-bm25.yaml")
LIST_TARGET_MS, PAGE_TARGET_MS = 1000.0, 2000.0


def memeval(*args: str) -> None:
    """``memeval ARGS`` in this process; raises when it fails."""
    try:
        memeval_main(list(args))
    except SystemExit as done:
        if done.code:
            raise RuntimeError(f"memeval {' '.join(args)} exited {done.code}") from None


def make_runs(root: Path, count: int) -> None:
    """``count`` runs: one real run, written again under 20 labels with their own ids and dates."""
    memeval("run", os.path.join(ROOT, "specs", "agent-memory.yaml"), "--only", "brain_lookup", "--quiet",
            "--out", str(root / "seed" / "r0"))
    record = read_run(str(root / "seed" / "r0" / "run.json"))
    for i in range(1, count):
        label = f"team-{i % 20:02d}"
        day = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00Z"
        copy = dataclasses.replace(record, label=label, run_id=f"{record.run_id}-{i:05d}", created_at=day)
        folder = root / label / f"r{i:05d}"
        folder.mkdir(parents=True)
        (folder / "run.json").write_text(copy.dumps(), encoding="utf-8")


def make_big_run(root: Path, work: Path, questions: int) -> str:
    """A real run of ``questions`` questions; its key in the folder."""
    from memeval.datasets.generate import TEMPLATES, HaystackSpec, write_file

    data = work / "needle.json"
    write_file(HaystackSpec(TEMPLATES["locker-code"], events=10, depth=0.5, seed=7, questions=questions,
                            session_turns=5, turn_words=8), str(data))
    suite = work / "needle-suite.yaml"
    suite.write_text(f"suite: lme-synthetic\nabout: streamed\ndataset:\n  format: longmemeval\n  path: {data}\n"
                     f"  variant: synthetic\n", encoding="utf-8")
    memeval("run", str(suite), "--engine", BM25_ENGINE, "--quiet", "--out", str(root / "big" / "r1"))
    return "big/r1"


def fetch(srv: ViewerServer, path: str) -> int:
    """GET ``path``; the body's size (raises on a status other than 200)."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.server_address[1], timeout=600)
    conn.request("GET", path)
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    if resp.status != 200:
        raise RuntimeError(f"GET {path}: {resp.status}")
    return len(body)


def line(name: str, times: list[float], target: float | None = None, size: int | None = None) -> str:
    ordered = sorted(times)
    p95 = ordered[int(round(0.95 * (len(ordered) - 1)))]
    text = f"{name:<22} p50 {statistics.median(ordered):9.1f} ms  p95 {p95:9.1f} ms  max {ordered[-1]:9.1f} ms  n {len(times)}"
    if size is not None:
        text += f"  {size / 1024:8.0f} KiB"
    if target is not None:
        text += f"  p95 vs {target / 1000:g} s {p95 / target:.3f}x"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000, help="runs in the folder (default 1000)")
    parser.add_argument("--questions", type=int, default=2000, help="questions of the large run (default 2000)")
    parser.add_argument("--n", type=int, default=20, help="requests timed per measure (default 20)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-view-") as tmp:
        root, work = Path(tmp) / "runs", Path(tmp) / "work"
        work.mkdir()
        started = time.perf_counter()
        make_runs(root, args.runs)
        big = make_big_run(root, work, args.questions)
        big_mb = (root / big / "run.json").stat().st_size / 1024 / 1024
        print(f"load average {os.getloadavg()[0]:.2f}; {args.runs} runs + one of {args.questions} questions "
              f"({big_mb:.1f} MB run.json) made in {time.perf_counter() - started:.0f} s", flush=True)
        with serving(root) as srv:
            build = timed(srv.index.refresh, 1)
            print(line("index build", build), flush=True)
            print(line("list /", timed(lambda: fetch(srv, "/"), args.n), LIST_TARGET_MS, fetch(srv, "/")))
            print(line("list /api/runs", timed(lambda: fetch(srv, "/api/runs"), args.n), LIST_TARGET_MS,
                       fetch(srv, "/api/runs")), flush=True)
        cold: list[float] = []
        for _ in range(max(1, min(3, args.n))):
            with serving(root) as srv:
                srv.index.refresh()
                cold += timed(lambda: fetch(srv, f"/run/{big}"), 1)
        print(line("run page cold", cold, PAGE_TARGET_MS), flush=True)
        with serving(root) as srv:
            size = fetch(srv, f"/run/{big}")
            print(line("run page warm", timed(lambda: fetch(srv, f"/run/{big}"), args.n), PAGE_TARGET_MS, size))
            print(line("run page 10", timed(lambda: fetch(srv, f"/run/{big}?page=9"), args.n), PAGE_TARGET_MS))
            print(line("probes JSON", timed(lambda: fetch(srv, f"/api/run/{big}/probes?page=3"), args.n),
                       PAGE_TARGET_MS), flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
