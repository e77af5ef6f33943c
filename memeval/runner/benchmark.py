"""The benchmark record of a run: the file its questions came from and the graders that apply."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from memeval.datasets.graders import LOCOMO_EVIDENCE_RECALL, LOCOMO_F1, GraderInfo
from memeval.datasets.judge import LOCOMO_J, LONGMEMEVAL_JUDGE
from memeval.datasets.model import LOCOMO_CATEGORIES
from memeval.record import BenchmarkInfo, GraderRecord
from memeval.spec.model import Suite

GRADERS = {"longmemeval": (LONGMEMEVAL_JUDGE,), "locomo": (LOCOMO_F1, LOCOMO_J, LOCOMO_EVIDENCE_RECALL)}
"""The official graders of each benchmark, in the order reports list them."""


def benchmark_info(suite: Suite) -> BenchmarkInfo | None:
    """The benchmark a suite's questions come from: its ``dataset:`` source and grader, else the
    ``x-dataset`` note ``memeval import`` writes and the suite-level ``grader:``; None for any
    other suite. No grader declared is ``memeval`` (memeval's own matcher)."""
    src = suite.dataset
    if src is not None:
        return _info(src.format, os.path.basename(src.path), src.variant, src.sha256, len(src.questions), src.grader)
    note: Any = suite.resolved.get("x-dataset")
    if not isinstance(note, dict) or note.get("format") not in GRADERS:
        return None
    return _info(note["format"], str(note.get("file", "")), str(note.get("variant", "")), str(note.get("sha256", "")),
                 int(note.get("selected", 0)), suite.resolved.get("grader"))


def _info(fmt: str, file: str, variant: str, sha256: str, questions: int, grader: str | None) -> BenchmarkInfo:
    return BenchmarkInfo(fmt, file, variant, sha256, questions, grader or "memeval",
                         tuple(_record(g) for g in GRADERS[fmt]),
                         {str(k): v for k, v in LOCOMO_CATEGORIES.items()} if fmt == "locomo" else {})


def _record(grader: GraderInfo) -> GraderRecord:
    fields = {f.name for f in dataclasses.fields(GraderRecord)}
    return GraderRecord(**{k: v for k, v in grader.to_json().items() if k in fields})
