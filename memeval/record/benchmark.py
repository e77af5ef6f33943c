"""What a run of a published benchmark (LongMemEval, LoCoMo) records about its source and grading."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GraderRecord:
    """One grader the run applies or reports, and the upstream rule it follows."""

    name: str
    """The grader's name (``locomo-f1``, ``longmemeval-judge``, ``locomo-mem0-j``, …)."""
    version: str
    """memeval's version of the grader."""
    upstream_repo: str
    """The repository whose scoring it reproduces."""
    upstream_file: str
    """The file there that holds the rule."""
    upstream_commit: str
    """The commit of that file it follows."""
    rule: str
    """The rule, in one paragraph."""


@dataclass(frozen=True)
class BenchmarkInfo:
    """The benchmark file a run's questions came from (streamed or imported) and its graders."""

    format: str
    """``longmemeval`` or ``locomo``."""
    file: str
    """The file's name."""
    variant: str
    """The variant the file was verified to be (``s``, ``s_cleaned``, ``locomo10``, …)."""
    sha256: str
    """The sha256 of the whole file."""
    questions: int
    """Questions selected from the file."""
    grader: str
    """The grader the suite selects for answers (``memeval``: its substring grader)."""
    graders: tuple[GraderRecord, ...]
    """The official graders for the benchmark, with the upstream rule each follows."""
    category_map: dict[str, str]
    """LoCoMo's category ids by their real names (empty for LongMemEval)."""
