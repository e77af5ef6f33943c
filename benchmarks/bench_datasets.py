"""Benchmark files in bounded memory: generating, streaming and importing a LongMemEval_s-sized file.

    python benchmarks/bench_datasets.py                       # 500 questions x 50 sessions x 10 turns
    python benchmarks/bench_datasets.py --questions 50        # a quick look
    python benchmarks/bench_datasets.py --dataset-questions 50  # project the full run from 50

Writes a synthetic LongMemEval-format file (``memeval generate``'s generator: 500 haystacks of
500 turns, ~120 words a turn, about the size of ``longmemeval_s.json``), then measures, each
stage in a fresh process so its peak RSS is its own:

- ``generate``: writing the file (MB/s);
- ``stream``: :func:`memeval.benchmarks.source.scan` (the bounded-memory reader, typed values for
  every turn, sha256), wall time, MB/s, per-instance parse p50/p95/p99, peak RSS;
- ``json.load``: the peer, the whole file loaded at once as plain dicts, same run, same file;
- ``import``: ``memeval import longmemeval --limit N`` (verify the whole file, then write N
  scenarios as YAML), questions/s and YAML MB/s;
- ``run``: ``memeval run`` of the first ``--run-questions`` imported scenarios on the reference
  engine (``engines/reference-bm25.yaml``, no model), wall time per question and peak RSS: the
  YAML route, one haystack of 500 turns after another, each exchange played through the
  scripted agent (a pre-turn recall per exchange) as every memeval scenario is.

- ``dataset``: ``memeval run`` of a suite declaring ``dataset:`` over the same file (all
  questions, or ``--dataset-questions N``): the file streamed, each question's haystack built in
  memory, run in a fresh tenant and let go; wall time, s/question and peak RSS.

Peak RSS is ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` of the stage's process.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MB = 1024 * 1024
BM25_ENGINE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "engines", "reference-bm25.yaml")


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[int(round((len(ordered) - 1) * q))]


def stage_generate(path: str, questions: int, words: int) -> dict[str, float]:
    from memeval.datasets.generate import TEMPLATES, HaystackSpec, write_file

    start = time.perf_counter()
    size = write_file(HaystackSpec(TEMPLATES["locker-code"], events=500, depth=0.5, seed=7, questions=questions,
                                   session_turns=10, turn_words=words), path)
    return {"seconds": time.perf_counter() - start, "bytes": size}


def stage_stream(path: str) -> dict[str, float]:
    from memeval.benchmarks.longmemeval.reader import parse_instance
    from memeval.datasets.stream import ArrayStream

    start = time.perf_counter()
    times, turns = [], 0
    stream = ArrayStream(path)
    last = time.perf_counter()
    for index, raw in enumerate(stream, 1):
        instance = parse_instance(Path(path), index, raw)
        turns += sum(len(s.turns) for s in instance.sessions)
        now = time.perf_counter()
        times.append((now - last) * 1000)
        last = now
    return {"seconds": time.perf_counter() - start, "instances": stream.count, "turns": turns,
            "p50_ms": _percentile(times, 0.5), "p95_ms": _percentile(times, 0.95), "p99_ms": _percentile(times, 0.99)}


def stage_json_load(path: str) -> dict[str, float]:
    start = time.perf_counter()
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    return {"seconds": time.perf_counter() - start, "instances": len(data)}


def stage_import(path: str, limit: int, out: str) -> dict[str, float]:
    from memeval.benchmarks.importer import import_dataset
    from memeval.benchmarks.source import Selection

    start = time.perf_counter()
    _, result = import_dataset("longmemeval", path, out, Selection(limit=limit), variant="synthetic")
    size = sum(p.stat().st_size for p in Path(out).rglob("*.yaml"))
    return {"seconds": time.perf_counter() - start, "scenarios": result.scenarios, "yaml_bytes": size}


def stage_run(suite_dir: str, questions: int, out: str) -> dict[str, float]:
    from memeval.cli import main

    scenarios = sorted(Path(suite_dir, "scenarios").glob("*.yaml"))
    for extra in scenarios[questions:]:
        extra.unlink()
    start = time.perf_counter()
    try:
        main(["run", str(Path(suite_dir, "suite.yaml")), "--engine", BM25_ENGINE, "--out", out, "--quiet"])
    except SystemExit as done:
        if done.code:
            raise
    return {"seconds": time.perf_counter() - start, "questions": min(questions, len(scenarios))}


def stage_dataset_run(path: str, questions: int, out: str) -> dict[str, float]:
    """``memeval run`` of a suite declaring ``dataset:`` (the file streamed, one question's
    haystack at a time, nothing written as YAML) on the reference engine without a model."""
    from memeval.cli import main

    suite = Path(out).parent / "dataset-suite.yaml"
    suite.write_text(f"suite: lme-synthetic\nabout: streamed\ndataset:\n  format: longmemeval\n  path: {path}\n"
                     f"  variant: synthetic\n  limit: {questions}\n", encoding="utf-8")
    start = time.perf_counter()
    try:
        main(["run", str(suite), "--engine", BM25_ENGINE, "--out", out, "--quiet"])
    except SystemExit as done:
        if done.code:
            raise
    return {"seconds": time.perf_counter() - start, "questions": questions}


STAGES = {"generate": stage_generate, "stream": stage_stream, "json.load": stage_json_load, "import": stage_import,
          "run": stage_run, "dataset-run": stage_dataset_run}


def _run_stage(name: str, *args: object) -> dict[str, float]:
    """One stage in a fresh interpreter; its result and its own peak RSS."""
    cmd = [sys.executable, os.path.abspath(__file__), "--stage", name, *map(str, args)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"stage {name} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--turn-words", type=int, default=120)
    parser.add_argument("--import-limit", type=int, default=50, help="Scenarios the import stage writes.")
    parser.add_argument("--run-questions", type=int, default=5, help="Imported scenarios run on the reference engine.")
    parser.add_argument("--dataset-questions", type=int, help="Questions the dataset-sourced run takes (default: all).")
    parser.add_argument("--stage", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stage:
        name, *rest = args.stage
        typed = [int(r) if r.isdigit() else r for r in rest]
        result = STAGES[name](*typed)
        print("\n" + json.dumps({**result, "peak_rss_mb": _rss_mb()}))
        return
    with tempfile.TemporaryDirectory(prefix="bench-datasets-") as tmp:
        path = os.path.join(tmp, "longmemeval_synthetic.json")
        gen = _run_stage("generate", path, args.questions, args.turn_words)
        size_mb = gen["bytes"] / MB
        print(f"file: {args.questions} questions x 50 sessions x 10 turns, {size_mb:.0f} MB ({args.turn_words} words a turn)")
        print(f"generate   {gen['seconds']:7.1f} s  {size_mb / gen['seconds']:6.1f} MB/s  peak RSS {gen['peak_rss_mb']:7.1f} MB")
        stream = _run_stage("stream", path)
        print(f"stream     {stream['seconds']:7.1f} s  {size_mb / stream['seconds']:6.1f} MB/s  peak RSS "
              f"{stream['peak_rss_mb']:7.1f} MB  {stream['turns']:.0f} turns typed; per instance "
              f"p50 {stream['p50_ms']:.1f} / p95 {stream['p95_ms']:.1f} / p99 {stream['p99_ms']:.1f} ms")
        peer = _run_stage("json.load", path)
        print(f"json.load  {peer['seconds']:7.1f} s  {size_mb / peer['seconds']:6.1f} MB/s  peak RSS "
              f"{peer['peak_rss_mb']:7.1f} MB  (the peer: whole file at once, untyped)")
        print(f"ratio      stream/json.load: time x{stream['seconds'] / peer['seconds']:.2f}, "
              f"peak RSS x{stream['peak_rss_mb'] / peer['peak_rss_mb']:.2f}")
        limit = min(args.import_limit, args.questions)
        suite = os.path.join(tmp, "suite")
        imp = _run_stage("import", path, limit, suite)
        # the import verifies the whole file first (one stream pass), then streams it again to write
        writing = imp["seconds"] - stream["seconds"]
        rates = (f"{imp['scenarios'] / writing:.1f} questions/s, {imp['yaml_bytes'] / MB / writing:.1f} MB/s of YAML"
                 if writing > 0 else "not measurable (the import took no longer than the stream pass alone)")
        print(f"import     {imp['seconds']:7.1f} s  (whole-file verify + {imp['scenarios']:.0f} scenarios, "
              f"{imp['yaml_bytes'] / MB:.0f} MB YAML)  peak RSS {imp['peak_rss_mb']:7.1f} MB; beyond the verify pass "
              f"{rates}")
        run = _run_stage("run", suite, args.run_questions, os.path.join(tmp, "run"))
        print(f"run        {run['seconds']:7.1f} s  {run['questions']:.0f} questions of 500 turns on reference-bm25, "
              f"{run['seconds'] / run['questions']:.2f} s/question  peak RSS {run['peak_rss_mb']:7.1f} MB")
        wanted = min(args.dataset_questions or args.questions, args.questions)
        full = _run_stage("dataset-run", path, wanted, os.path.join(tmp, "dataset-run"))
        per = full["seconds"] / full["questions"]
        print(f"dataset    {full['seconds']:7.1f} s  {full['questions']:.0f} questions streamed from the file (dataset: suite) "
              f"on reference-bm25, {per:.2f} s/question, {per * args.questions / 60:.1f} min for {args.questions}  "
              f"peak RSS {full['peak_rss_mb']:7.1f} MB")


if __name__ == "__main__":
    main()
