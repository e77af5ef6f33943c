"""Speed of the cluster bootstrap and the clustered paired test.

    python benchmarks/bench_stats.py [--probes 2000] [--clusters 10] [--resamples 2000] [--n 50]

Prints p50 / p95 / max wall time in ms over ``--n`` calls of:

- ``cluster_rate``: the cluster bootstrap interval of a rate (target: well under 1 s for 2,000
  probes in 10 clusters, B = 2,000), and its peer measured in the same run: the same resampling
  written as a plain Python loop over clusters (what it costs without numpy);
- ``cluster_mean``: the same for a mean;
- ``paired_cluster_test`` with the given clusters (exact sign flips up to 12) and with 40
  clusters (Monte Carlo, ``--resamples`` flips).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable

from memeval.stats.clustered import cluster_mean, cluster_rate, paired_cluster_test

TARGET_MS = 1000.0


def timed(fn: Callable[[], object], n: int) -> list[float]:
    """Wall times of ``n`` calls, in ms."""
    out = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def loop_bootstrap(outcomes: list[bool], clusters: list[int], resamples: int, seed: int) -> tuple[float, float]:
    """The peer: per-cluster sums, then resampling clusters in a Python loop."""
    sums: dict[int, list[int]] = {}
    for o, c in zip(outcomes, clusters):
        s = sums.setdefault(c, [0, 0])
        s[0] += o
        s[1] += 1
    cells = list(sums.values())
    r = random.Random(seed)
    stats = []
    for _ in range(resamples):
        picks = r.choices(cells, k=len(cells))
        stats.append(sum(p[0] for p in picks) / sum(p[1] for p in picks))
    qs = statistics.quantiles(stats, n=40, method="inclusive")
    return qs[0], qs[-1]


def line(name: str, times: list[float], peer: list[float] | None = None) -> str:
    ordered = sorted(times)
    p50, p95 = statistics.median(ordered), ordered[int(round(0.95 * (len(ordered) - 1)))]
    text = f"{name:<48} p50 {p50:8.2f} ms  p95 {p95:8.2f} ms  max {ordered[-1]:8.2f} ms  n {len(times)}"
    if peer is not None:
        text += f"  vs loop {p50 / statistics.median(peer):.3f}x  vs 1 s {p95 / TARGET_MS:.3f}x"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--probes", type=int, default=2000)
    parser.add_argument("--clusters", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--n", type=int, default=50)
    args = parser.parse_args()
    r = random.Random(1)
    labels = [r.randrange(args.clusters) for _ in range(args.probes)]
    outcomes = [r.random() < 0.3 + 0.04 * c for c in labels]
    values = [r.random() for _ in labels]
    base = {i: float(o) for i, o in enumerate(outcomes)}
    other = {i: float(r.random() < 0.5) for i in base}
    wide = {i: i % 40 for i in base}
    print(f"load average {os.getloadavg()[0]:.2f}; {args.probes} probes, {args.clusters} clusters, B = {args.resamples}")
    peer = timed(lambda: loop_bootstrap(outcomes, labels, args.resamples, 1), max(5, args.n // 10))
    print(line("cluster_rate", timed(lambda: cluster_rate(outcomes, labels, resamples=args.resamples), args.n), peer))
    print(line("  peer: plain Python loop", peer))
    print(line("cluster_mean", timed(lambda: cluster_mean(values, labels, resamples=args.resamples), args.n)))
    print(line(f"paired_cluster_test, {args.clusters} clusters",
               timed(lambda: paired_cluster_test(base, other, dict(enumerate(labels)), resamples=args.resamples), args.n)))
    print(line("paired_cluster_test, 40 clusters (Monte Carlo)",
               timed(lambda: paired_cluster_test(base, other, wide, resamples=args.resamples), args.n)))
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
