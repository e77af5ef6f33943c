"""How much of a suite run is the harness, not the engine: one command.

    python benchmarks/bench_harness.py                     # specs/agent-memory.yaml, 5 repeats
    python benchmarks/bench_harness.py --repeats 10 --suite tests/language/language.yaml

Measured in this one run, each figure as p50 / p95 over the repeats. The child processes keep
Python's bytecode cache (in a temporary folder, written by one unmeasured run), as an installed
package has it, whatever ``PYTHONDONTWRITEBYTECODE`` says; a CPU check (a fixed Python loop) is
printed beside the load average, since a shared host's speed drifts with no sign in the load:

- ``cli``: the whole ``memeval run SUITE --quiet`` in a fresh process (Python start-up, imports,
  load, run, publish): wall and CPU (user + system) seconds;
- ``start-up``: a bare ``python -c pass``, ms;
- ``imports``: a fresh process importing every module an offline ``memeval run`` of the suite
  ends up with (read from a real run first, the lazily loaded ones included), less start-up, ms;
- ``model load``: a fresh process's first call of the embedding model (it loads its tokenizer and
  weights then; later calls reuse them), ms;
- ``in-process``: load + run + derive + publish with the engine wrapped in a timing proxy and
  the model already loaded, after one unmeasured run (so imports and the model are not counted
  twice): engine seconds (inside any engine call), harness seconds (the rest), harness time as a
  share of engine time, and the CPU seconds of the whole;
- ``breakdown``: the cli wall p50 less start-up, imports, model load, engine and harness (p50s):
  what none of them accounts for (a shared machine's waiting, and Jinja's first compile);
- ``yaml``: reading the suite's files with the C-parser path and with the pure-Python loader
  (the peer), ms each and their ratio.

The machine may be shared: wall time then stretches, so CPU time is printed beside it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = "import sys; from memeval.cli import main; main(sys.argv[1:])"
# A run that prints the modules it ended with (stdout's last line) instead of its report.
RUN_MODULES = ("import json, sys\nfrom memeval.cli import main\ntry:\n    main(sys.argv[1:])\n"
               "except SystemExit:\n    pass\nprint(json.dumps(sorted(sys.modules)))")
FIRST_ENCODE = ("import time\nfrom memeval.engines.reference.embedders import load_embedder\nembedder = load_embedder('static')\n"
                "start, cpu = time.perf_counter(), time.process_time()\nembedder.embed(['warm'])\n"
                "print(time.perf_counter() - start, time.process_time() - cpu)")


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


def cpu_check() -> float:
    """Seconds of a fixed pure-Python loop (best of 3): this machine's speed at the time, printed
    beside the figures (a shared host's CPU slows by a third between runs with no sign in the
    load average)."""
    def loop() -> float:
        start, total = time.perf_counter(), 0
        for i in range(2_000_000):
            total += i
        return time.perf_counter() - start

    return min(loop() for _ in range(3))


def percentiles(samples: list[float]) -> tuple[float, float]:
    """(p50, p95): the sample at index round((n - 1) q) of the sorted samples."""
    ordered = sorted(samples)
    return tuple(ordered[round((len(ordered) - 1) * q)] for q in (0.5, 0.95))  # type: ignore[return-value]


def _child(command: list[str]) -> tuple[float, float, str]:
    """(wall, cpu) seconds and the stdout of a child process run to completion."""
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu, done.stdout


@contextlib.contextmanager
def bytecode_cache() -> Iterator[tuple[str, bool]]:
    """Let this process's children keep Python's bytecode cache, in a temporary folder (the
    checkout stays clean), as an installed package has it (pip compiles it at install). Yields
    the folder and whether the environment had turned the cache off (``PYTHONDONTWRITEBYTECODE``,
    set on this machine: every run then compiles every module again); restores it on exit."""
    saved = {name: os.environ.get(name) for name in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    with tempfile.TemporaryDirectory(prefix="memeval-bytecode-") as folder:
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = folder
        try:
            yield folder, saved["PYTHONDONTWRITEBYTECODE"] is not None
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def cli_run(suite: str, engine: str | None = None) -> tuple[float, float]:
    """(wall, cpu) seconds of one ``memeval run`` of ``suite`` (on ``engine``, default the
    suite's) in a fresh process."""
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-c", RUN, "run", suite, "--quiet", "--out", os.path.join(out, "run")]
        wall, cpu, _ = _child(command + (["--engine", engine] if engine else []))
    return wall, cpu


def run_modules(suite: str) -> list[str]:
    """What to import to load what an offline run of ``suite`` loads: its memeval modules and
    the top-level packages outside the standard library (they import the rest)."""
    with tempfile.TemporaryDirectory() as out:
        stdout = _child([sys.executable, "-c", RUN_MODULES, "run", suite, "--quiet", "--out", os.path.join(out, "run")])[2]
    loaded: list[str] = json.loads(stdout.splitlines()[-1])
    tops = {m.split(".")[0] for m in loaded} - set(sys.stdlib_module_names) - {"memeval", "cython_runtime"}
    third_party = sorted(t for t in tops if t.isidentifier() and not t.startswith("_"))
    return [m for m in loaded if m.startswith("memeval")] + third_party


def startup_ms() -> tuple[float, float]:
    """(wall, cpu) milliseconds of a bare ``python -c pass``."""
    wall, cpu, _ = _child([sys.executable, "-c", "pass"])
    return wall * 1000, cpu * 1000


def import_ms(modules: list[str], startup: tuple[float, float]) -> tuple[float, float]:
    """(wall, cpu) milliseconds a fresh process spends importing ``modules``, less ``startup``."""
    wall, cpu, _ = _child([sys.executable, "-c", "import " + ", ".join(modules)])
    return wall * 1000 - startup[0], cpu * 1000 - startup[1]


def model_ms() -> tuple[float, float]:
    """(wall, cpu) milliseconds of the embedding model's first call in a fresh process."""
    wall, cpu = _child([sys.executable, "-c", FIRST_ENCODE])[2].split()[-2:]
    return float(wall) * 1000, float(cpu) * 1000


def in_process(suite_file: str) -> tuple[float, float, float]:
    """(engine, harness, cpu) seconds for load + run + derive + publish, the engine behind a proxy."""
    from memeval.engines.reference.engine import create
    from memeval.report.publish import publish
    from memeval.runner.options import RunOptions
    from memeval.runner.suite import run_suite
    from memeval.score.derive import derive
    from memeval.spec.load import load_suite

    engine = create({"embedder": "auto"})  # built before the clock starts (the model is loaded by then)
    proxy = TimingProxy(engine)
    cpu, start = time.process_time(), time.perf_counter()
    suite = load_suite(suite_file)
    record = derive(run_suite(suite, proxy, RunOptions(label="bench")))  # type: ignore[arg-type]
    with tempfile.TemporaryDirectory() as out:
        publish(record, out)
    total = time.perf_counter() - start
    return proxy.seconds, total - proxy.seconds, time.process_time() - cpu


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
    load, check = os.getloadavg()[0], cpu_check()
    with bytecode_cache() as (cache, was_off):
        first = cli_run(suite)  # unmeasured: it writes the bytecode cache
        runs = [cli_run(suite) for _ in range(args.repeats)]
        modules = run_modules(suite)
        startups = [startup_ms() for _ in range(args.repeats)]
        startup = (percentiles([w for w, _ in startups])[0], percentiles([c for _, c in startups])[0])
        imports = [import_ms(modules, startup) for _ in range(args.repeats)]
        models = [model_ms() for _ in range(args.repeats)]
    from memeval.engines.reference.embedders import load_embedder

    embedder = load_embedder("auto")
    if embedder is not None:
        embedder.embed(["warm"])  # the model loads once per process: its cost is the row above
    in_process(suite)  # unmeasured: the lazily imported modules load here, as counted in imports
    inproc = [in_process(suite) for _ in range(args.repeats)]
    yamls = [yaml_ms(suite) for _ in range(args.repeats)]
    print(f"suite {args.suite}, {args.repeats} repeats, {os.cpu_count()} cores, "
          f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, "
          f"CPU check (2M-step Python loop) {check * 1000:.0f} ms at the start, {cpu_check() * 1000:.0f} ms at the end")
    print("children keep Python's bytecode cache (in a temporary folder); the first run, which wrote it, took "
          f"{first[0]:.3f} s" + (" (this environment had set PYTHONDONTWRITEBYTECODE: without a cache, every run "
                                 "compiles every module)" if was_off else ""))
    print("figure                         p50        p95")
    rows = [
        ("cli wall (s)", [w for w, _ in runs]),
        ("cli cpu (s)", [c for _, c in runs]),
        ("start-up (ms)", [w for w, _ in startups]),
        (f"imports (ms, {len(modules)} names)", [w for w, _ in imports]),
        ("imports cpu (ms)", [c for _, c in imports]),
        ("model load (ms)", [w for w, _ in models]),
        ("model load cpu (ms)", [c for _, c in models]),
        ("engine (s, in-process)", [e for e, _, _ in inproc]),
        ("harness (s, in-process)", [h for _, h, _ in inproc]),
        ("harness / engine", [h / e for e, h, _ in inproc]),
        ("in-process cpu (s)", [c for _, _, c in inproc]),
        ("yaml C path (ms)", [f for f, _ in yamls]),
        ("yaml pure Python (ms, peer)", [p for _, p in yamls]),
        ("yaml pure / C (x)", [p / f for f, p in yamls]),
    ]
    for name, samples in rows:
        p50, p95 = percentiles(samples)
        print(f"{name:<28} {p50:>9.3f}  {p95:>9.3f}")
    parts = {"start-up": startup[0] / 1000, "imports": percentiles([w for w, _ in imports])[0] / 1000,
             "model load": percentiles([w for w, _ in models])[0] / 1000, "engine": percentiles([e for e, _, _ in inproc])[0],
             "harness": percentiles([h for _, h, _ in inproc])[0]}
    wall = percentiles([w for w, _ in runs])[0]
    print("cli wall p50 " + f"{wall:.3f} s = " + " + ".join(f"{k} {v:.3f}" for k, v in parts.items())
          + f" + unaccounted {wall - sum(parts.values()):.3f}")


if __name__ == "__main__":
    main()
