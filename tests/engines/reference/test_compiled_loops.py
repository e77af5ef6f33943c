"""The compiled loops (memeval/engines/reference/compiled_loops.py) are read from numba's on-disk cache by a
later process, not compiled again in each (a loop calling another one kept in a closure missed
the cache every time: seconds on a large tenant's first search)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from memeval.engines.reference import kernel as reference_kernel

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not reference_kernel.available(), reason="the fast extra (numba) is not installed")]

# Every loop the engine calls, through the functions that call it (the dense pick directly), on
# inputs of the engine's types; then each loop's cache hits and misses in this process.
CHILD = textwrap.dedent("""
    import json
    import numpy as np
    from memeval.engines.reference import compiled_loops
    from memeval.engines.reference import kernel as reference_kernel
    from memeval.engines.reference import signals as reference_signals
    from memeval.text.analyze import flatten
    from memeval.engines.reference.rank import STOPWORD_WEIGHT, Query

    acc = np.zeros(4)
    reference_kernel.accumulate(np.array([0, 2]), np.array([1, 3], dtype=np.int32), np.array([1, 2], dtype=np.int32),
                                np.array([1.5]), np.ones(4), acc)
    assert [doc for doc, _ in reference_kernel.best(acc, np.zeros(4, dtype=np.int64), np.ones(1, dtype=np.bool_), 2, True)] == [3, 1]
    vecs = np.eye(3, dtype=np.float32)
    found, _ = reference_kernel.loops().nearest(vecs, np.arange(3), np.ones(3, dtype=np.int64), vecs[1], 0.5, 2)
    assert found.tolist() == [1]
    query = Query("deploy the budget")
    probes = reference_signals.needles(query.words, STOPWORD_WEIGHT, query.total, query.grams, query._gram_words)
    flats = [f" {flatten('budget deployed')} "]
    assert reference_signals.measure(probes, flats) == [query.measure(flat) for flat in flats]
    stats = {name: getattr(compiled_loops, name).stats for name in ("accumulate", "keep", "nearest", "signals")}
    print(json.dumps({name: [sum(s.cache_hits.values()), sum(s.cache_misses.values())] for name, s in stats.items()}))
""")


def run_child(cache: str) -> dict[str, list[int]]:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    counts: dict[str, list[int]] = json.loads(done.stdout.splitlines()[-1])
    return counts


def test_a_second_process_reads_every_loop_from_numbas_cache(tmp_path):
    cache = str(tmp_path / "numba")
    first = run_child(cache)
    assert all(misses >= 1 for _, misses in first.values()), first  # compiled, and written to the cache
    second = run_child(cache)
    assert second == {name: [1, 0] for name in first}, second
