"""Every benchmark in benchmarks/ still starts: its imports and options match the code it
measures (a renamed name once broke bench_reference.py without any test noticing)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

def _commands() -> list[str]:
    """The benchmark scripts (a helper module such as bench_peers.py, imported by another, has no main)."""
    folder = os.path.join(ROOT, "benchmarks")
    return sorted(f for f in os.listdir(folder) if f.startswith("bench_") and f.endswith(".py")
                  and "__main__" in open(os.path.join(folder, f), encoding="utf-8").read())


BENCHMARKS = _commands()


def test_the_benchmarks_are_found() -> None:
    """An empty list would leave the parametrised test below skipped, passing nothing."""
    assert {"bench_datasets.py", "bench_stats.py", "bench_dask.py"} <= set(BENCHMARKS)


@pytest.mark.slow
@pytest.mark.parametrize("name", BENCHMARKS)
def test_benchmark_starts(name: str) -> None:
    done = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", name), "--help"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout
