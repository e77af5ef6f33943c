"""Benchmark the sweep on Dask: the fake sweep serially, then on a 2-worker LocalCluster.

    python benchmarks/bench_dask.py                          # 4 profiles x 1 repeat of specs/cortex-flags-fake.yaml
    python benchmarks/bench_dask.py --profiles 2 --workers 2 # a quicker look

Both legs run the same cells (the first ``--profiles`` profiles of the matrix, one repeat) into
fresh folders, in this process through :func:`memeval.sweep.run_sweep`:

- ``serial``: the local executor with ``parallel: 1`` (one cell after another; the peer);
- ``dask``: a ``LocalCluster`` of ``--workers`` processes, one thread each (``--executor dask``).

Printed: wall time of each leg, the cluster's start-up, the speed-up (serial / dask, without and
with start-up), and per unit on Dask: the dispatch latency (from submission, or from the end of
the previous unit on the same worker when that is later, to the unit starting), the return
latency (the unit ending on the worker to the driver holding its result: its files, as bytes), and
the unit's own time, as p50/p95/max over the cells.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from dataclasses import replace

from memeval.runner.executor import DaskExecutor, LocalExecutor, UnitTiming
from memeval.spec.matrix import load_matrix
from memeval.sweep import SweepOptions, run_sweep

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[int(round((len(ordered) - 1) * q))]


def _row(name: str, samples: list[float]) -> str:
    ms = [s * 1000 for s in samples]
    return f"  {name:<22} p50 {_percentile(ms, 0.5):9.1f} ms   p95 {_percentile(ms, 0.95):9.1f} ms   max {max(ms):9.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matrix", default=os.path.join(ROOT, "specs", "cortex-flags-fake.yaml"))
    parser.add_argument("--profiles", type=int, default=4, help="How many of the matrix's profiles (default 4).")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    matrix = load_matrix(args.matrix)
    matrix = replace(matrix, profiles=matrix.profiles[:args.profiles])
    cells = len(matrix.profiles)
    print(f"{matrix.name}: {cells} profiles x 1 repeat, {args.workers} Dask workers, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="bench-dask-") as tmp:
        start = time.perf_counter()
        serial = run_sweep(matrix, SweepOptions(repeat=1, parallel=1, out=os.path.join(tmp, "serial"),
                                                executor=LocalExecutor()))
        serial_s = time.perf_counter() - start
        start = time.perf_counter()
        executor = DaskExecutor(workers=args.workers)
        startup_s = time.perf_counter() - start
        try:
            start = time.perf_counter()
            dask = run_sweep(matrix, SweepOptions(repeat=1, out=os.path.join(tmp, "dask"), executor=executor))
            dask_s = time.perf_counter() - start
        finally:
            executor.close()
    failed = [f"{leg}: {len(result.failed)} cell(s) failed: {result.failed[0].reason}"
              for leg, result in (("serial", serial), ("dask", dask)) if result.failed]
    if failed:  # the time of a failed cell is not the time of the sweep: no speed-up from it
        raise SystemExit("\n".join(failed))
    print(f"serial (parallel 1)    {serial_s:8.1f} s   ({serial_s / cells:.1f} s a cell)")
    print(f"dask, {args.workers} workers        {dask_s:8.1f} s   + cluster start {startup_s:.1f} s")
    print(f"speed-up               {serial_s / dask_s:8.2f}x  ({serial_s / (dask_s + startup_s):.2f}x with start-up)")
    print(f"per unit on Dask ({len(executor.timings)} units):")
    print(_row("dispatch latency", _dispatch(executor.timings)))
    print(_row("return latency", [t.received - t.ended for t in executor.timings]))
    print(_row("unit time on worker", [t.ended - t.started for t in executor.timings]))


def _dispatch(timings: list[UnitTiming]) -> list[float]:
    """Per unit: start minus the later of its submission and its worker's previous unit's end."""
    out = []
    by_worker: dict[str, list[UnitTiming]] = {}
    for t in timings:
        by_worker.setdefault(t.worker, []).append(t)
    for units in by_worker.values():
        units.sort(key=lambda t: t.started)
        previous_end = 0.0
        for t in units:
            out.append(t.started - max(t.submitted, previous_end))
            previous_end = t.ended
    return out


if __name__ == "__main__":  # the guard LocalCluster's worker processes need
    main()
