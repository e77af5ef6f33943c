"""The benchmark record of a run: the file its questions came from and the graders that apply."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from memeval.benchmarks import AnyBenchmark, find
from memeval.benchmarks.base import GraderInfo
from memeval.record import BenchmarkInfo, GraderRecord
from memeval.spec.model import Suite


def benchmark_info(suite: Suite) -> BenchmarkInfo | None:
    """The benchmark a suite's questions come from: its ``dataset:`` source and grader, else the
    ``x-dataset`` note ``memeval import`` writes and the suite-level ``grader:``; None for any
    other suite (or a note naming no installed benchmark). No grader declared is ``memeval``
    (memeval's own matcher)."""
    src = suite.dataset
    if src is not None:
        bench = find(src.format)
        assert bench is not None  # the loader verified the file with it
        return _info(bench, os.path.basename(src.path), src.variant, src.sha256, len(src.questions), src.grader)
    note: Any = suite.resolved.get("x-dataset")
    bench = find(str(note.get("format"))) if isinstance(note, dict) else None
    if bench is None:
        return None
    return _info(bench, str(note.get("file", "")), str(note.get("variant", "")), str(note.get("sha256", "")),
                 int(note.get("selected", 0)), suite.resolved.get("grader"))


def _info(bench: AnyBenchmark, file: str, variant: str, sha256: str, questions: int, grader: str | None) -> BenchmarkInfo:
    return BenchmarkInfo(bench.name, file, variant, sha256, questions, grader or "memeval",
                         tuple(_record(g) for g in bench.graders), dict(bench.category_map))


def _record(grader: GraderInfo) -> GraderRecord:
    fields = {f.name for f in dataclasses.fields(GraderRecord)}
    return GraderRecord(**{k: v for k, v in grader.to_json().items() if k in fields})
