"""How much of a suite run is the harness, not the engine: one command.

    python benchmarks/bench_harness.py                     # specs/agent-memory.yaml, 5 repeats
    python benchmarks/bench_harness.py --repeats 10 --suite tests/language/language.yaml

Measured in this one run, each figure as p50 / p95 over the repeats:

- ``cli``: the whole ``memeval run SUITE --quiet`` in a fresh process (Python start-up, imports,
  load, run, publish): wall and CPU (user + system) seconds;
- ``imports``: a fresh process importing what ``memeval run`` imports, less a bare ``python -c
  pass`` (its start-up), in ms;
- ``in-process``: load + run + derive + publish with the engine wrapped in a timing proxy:
  engine seconds (inside any engine call), harness seconds (the rest), and harness time as a
  share of engine time;
- ``yaml``: reading the suite's files with the C-parser path and with the pure-Python loader
  (the peer), ms each and their ratio.

The machine may be shared: wall time then stretches, so CPU time is printed beside it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN_IMPORTS = "import memeval.cli, memeval.cli.run, memeval.run.session, memeval.engines.reference"


class TimingProxy:
    """An engine whose every method call adds its duration to ``seconds`` (attributes that are
    not callables pass through)."""

    def __init__(self, engine: Any):
        self._engine, self.seconds, self.calls = engine, 0.0, 0

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._engine, name)
        if not callable(value):
            return value

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return value(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
                self.calls += 1

        return timed


def percentiles(samples: list[float]) -> tuple[float, float]:
    """(p50, p95): the sample at index round((n - 1) q) of the sorted samples."""
    ordered = sorted(samples)
    return tuple(ordered[round((len(ordered) - 1) * q)] for q in (0.5, 0.95))  # type: ignore[return-value]


def _child(command: list[str]) -> tuple[float, float]:
    """(wall, cpu) seconds of a child process run to completion."""
    before = os.times()
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def cli_run(suite: str) -> tuple[float, float]:
    """One ``memeval run`` in a fresh process."""
    with tempfile.TemporaryDirectory() as out:
        return _child([sys.executable, "-c", "import sys; from memeval.cli import main; main(sys.argv[1:])",
                       "run", suite, "--quiet", "--out", os.path.join(out, "run")])


def import_ms() -> float:
    """Milliseconds a fresh process spends importing what ``memeval run`` needs, start-up excluded."""
    bare = _child([sys.executable, "-c", "pass"])[0]
    full = _child([sys.executable, "-c", RUN_IMPORTS])[0]
    return (full - bare) * 1000


def in_process(suite_file: str) -> tuple[float, float]:
    """(engine, harness) seconds for load + run + derive + publish, the engine behind a proxy."""
    from memeval.engines.reference import create
    from memeval.report.publish import publish
    from memeval.run.options import RunOptions
    from memeval.run.suite import run_suite
    from memeval.score.derive import derive
    from memeval.spec.load import load_suite

    engine = create({"embedder": "auto"})  # built before the clock starts: model loading is the engine's
    proxy = TimingProxy(engine)
    start = time.perf_counter()
    suite = load_suite(suite_file)
    record = derive(run_suite(suite, proxy, RunOptions(label="bench")))  # type: ignore[arg-type]
    with tempfile.TemporaryDirectory() as out:
        publish(record, out)
    total = time.perf_counter() - start
    return proxy.seconds, total - proxy.seconds


def yaml_ms(suite_file: str) -> tuple[float, float]:
    """(fast, pure-Python) ms to read the suite's files (parse + marks, no schema)."""
    from memeval.spec import yamlload
    from memeval.spec.load import load_suite

    raws = [open(f, "rb").read() for f in load_suite(suite_file).files]

    def clock(read: Callable[[bytes], Any]) -> float:
        start = time.perf_counter()
        for raw in raws:
            read(raw)
        return (time.perf_counter() - start) * 1000

    return clock(yamlload.read_yaml), clock(lambda raw: yamlload._compose(raw.decode("utf-8"), yamlload._Loader))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="specs/agent-memory.yaml")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    suite = os.path.join(ROOT, args.suite) if not os.path.isabs(args.suite) else args.suite
    runs = [cli_run(suite) for _ in range(args.repeats)]
    imports = [import_ms() for _ in range(args.repeats)]
    inproc = [in_process(suite) for _ in range(args.repeats)]
    yamls = [yaml_ms(suite) for _ in range(args.repeats)]
    print(f"suite {args.suite}, {args.repeats} repeats, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print("figure                         p50        p95")
    rows = [
        ("cli wall (s)", [w for w, _ in runs]),
        ("cli cpu (s)", [c for _, c in runs]),
        ("imports (ms)", imports),
        ("engine (s, in-process)", [e for e, _ in inproc]),
        ("harness (s, in-process)", [h for _, h in inproc]),
        ("harness / engine", [h / e for e, h in inproc]),
        ("yaml C path (ms)", [f for f, _ in yamls]),
        ("yaml pure Python (ms, peer)", [p for _, p in yamls]),
        ("yaml pure / C (x)", [p / f for f, p in yamls]),
    ]
    for name, samples in rows:
        p50, p95 = percentiles(samples)
        print(f"{name:<28} {p50:>9.3f}  {p95:>9.3f}")


if __name__ == "__main__":
    main()
