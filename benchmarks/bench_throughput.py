"""Benchmark a run against a latency-bound engine and model: wall time at ``--jobs 1, 4, 16``
beside the ideal.

    python benchmarks/bench_throughput.py                      # 200 units, 50 ms ± 20 ms a request
    python benchmarks/bench_throughput.py --units 40 --jobs 1,8   # a quicker look

Engine leg: a suite of ``--units`` independent scenarios shaped like a LongMemEval question (a
haystack thread of ``--exchanges`` turns in a tenant of its own, then one question), generated
into a temporary folder, runs through :func:`memeval.runner.suite.run_suite` on the ``cortex``
adapter against the fake CortexDB as a separate process answering every request after
``--latency`` ± ``--jitter`` seconds (``--latency``/``--jitter`` of ``memeval serve
fake-cortex``), once per ``--jobs`` value. The fake counts the requests it answered; the ideal is
requests × latency ÷ jobs (every request waiting its latency, ``jobs`` of them at a time), and
efficiency is ideal ÷ wall. The adapter itself sends a recall's sections in parallel (its
``concurrency`` setting), which can put a sequential run above 1.

Model leg: ``--model-calls`` answers through :class:`memeval.llm.client.Batch` against the mock
inference server with ``--latency``, at concurrency 1, 4 and 16 (the ``concurrency`` of an
``llm:`` block): ideal = calls × latency ÷ concurrency.

The load beside each figure is the machine's load average when the leg started.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time
from pathlib import Path

import httpx

from memeval.engines.cortex import create as create_cortex
from memeval.llm.client import Batch
from memeval.llm.settings import CacheSettings, resolve
from memeval.runner.executor import Executor, LocalExecutor, ThreadExecutor
from memeval.runner.options import RunOptions
from memeval.runner.suite import run_suite
from memeval.servers.fake_cortex.routes import STATS_PATH
from memeval.servers.launch import start_server
from memeval.spec.load import load_suite

KEY = "sk-bench-throughput"


def write_suite(folder: Path, units: int, exchanges: int) -> Path:
    """A suite of ``units`` scenarios, each a thread of ``exchanges`` turns and one question."""
    (folder / "scenarios").mkdir(parents=True)
    for n in range(units):
        turns = "\n".join(f'      - user: "Note {i} of case {n}: the locker code is {1000 + n * 7 + i}."'
                          for i in range(exchanges))
        (folder / "scenarios" / f"q{n:04d}.yaml").write_text(f"""scenario: q{n:04d}
about: One question over its own haystack thread.
tenants: [t{n:04d}]
agents:
  - {{id: helper}}
threads:
  - id: history
    agent: helper
    day: 1
    exchanges:
{turns}
probes:
  - id: q{n:04d}-ask
    route: ask
    agent: helper
    question: What is the locker code of case {n}?
    style: lexical
    expect: ["{1000 + n * 7 + exchanges - 1}"]
""", encoding="utf-8")
    suite = folder / "suite.yaml"
    suite.write_text("suite: throughput\ninclude: [scenarios/*.yaml]\ndefaults: {window: 2, settle_timeout_s: 60}\n",
                     encoding="utf-8")
    return suite


def _answered(url: str) -> int:
    return int(httpx.get(f"{url}/{STATS_PATH}", timeout=10).json()["answered"])


def _load() -> str:
    return f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"


def engine_leg(args: argparse.Namespace, folder: Path) -> None:
    suite = load_suite(str(write_suite(folder, args.units, args.exchanges)))
    flags = ["--latency", str(args.latency), "--jitter", str(args.jitter), "--index-delay", "0",
             "--enrich-delay", "0.001"]
    os.environ["CORTEX_DB_KEY"] = KEY
    with start_server("fake_cortex", flags, env={"CORTEX_API_KEY": KEY}) as fake:
        print(f"engine: {args.units} units of {args.exchanges} turns and 1 question, the fake CortexDB at "
              f"{args.latency * 1000:.0f} ± {args.jitter * 1000:.0f} ms a request")
        for jobs in args.jobs:
            executor: Executor = ThreadExecutor(jobs) if jobs > 1 else LocalExecutor()
            engine = create_cortex({"url": fake.url})
            load, before = _load(), _answered(fake.url)
            start = time.perf_counter()
            record = run_suite(suite, engine, RunOptions(engine="cortex", label=f"jobs{jobs}", enrich_wait_s=0),
                               executor=executor)
            wall = time.perf_counter() - start
            engine.close()
            requests = _answered(fake.url) - before
            ideal = requests * args.latency / jobs
            ok = sum(s.status == "ok" for s in record.scenarios)
            print(f"  --jobs {jobs:<3} wall {wall:8.2f} s   requests {requests:6d}   ideal {ideal:8.2f} s   "
                  f"efficiency {ideal / wall:5.2f}   scenarios ok {ok}/{len(record.scenarios)}   ({load})")


def model_leg(args: argparse.Namespace) -> None:
    with start_server("mock_inference", ["--latency", str(args.latency)]) as mock:
        settings = resolve({"url": f"{mock.url}/v1"}, {})
        print(f"model: {args.model_calls} answers from the mock inference server at {args.latency * 1000:.0f} ms a call")
        for concurrency in args.jobs:
            batch = Batch(dataclasses.replace(settings.answer, concurrency=concurrency), CacheSettings(None))
            jobs = [{"question": f"What is the code of case {n}?", "pack": f"- The code of case {n} is {n}."}
                    for n in range(args.model_calls)]
            load = _load()
            start = time.perf_counter()
            replies = batch.run(jobs)
            wall = time.perf_counter() - start
            batch.close()
            ideal = args.model_calls * args.latency / concurrency
            answered = sum(not isinstance(r, (str, type(None))) for r in replies)
            print(f"  concurrency {concurrency:<3} wall {wall:8.2f} s   calls {args.model_calls:6d}   ideal {ideal:8.2f} s   "
                  f"efficiency {ideal / wall:5.2f}   answered {answered}/{len(replies)}   ({load})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=200, help="Scenarios in the engine leg (default 200).")
    parser.add_argument("--exchanges", type=int, default=3, help="Turns in each scenario's thread (default 3).")
    parser.add_argument("--latency", type=float, default=0.05, help="Seconds a request waits (default 0.05).")
    parser.add_argument("--jitter", type=float, default=0.02, help="Plus or minus, seconds (default 0.02).")
    parser.add_argument("--jobs", type=lambda text: [int(j) for j in text.split(",")], default=[1, 4, 16],
                        help="Comma-separated --jobs (and model concurrency) values (default 1,4,16).")
    parser.add_argument("--model-calls", type=int, default=400, help="Answers in the model leg (default 400; 0: none).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-throughput-") as tmp:
        engine_leg(args, Path(tmp))
    if args.model_calls:
        model_leg(args)


if __name__ == "__main__":
    main()
