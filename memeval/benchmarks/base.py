"""The ``Benchmark`` protocol: everything a published benchmark contributes to memeval.

A benchmark is one subpackage (``memeval/benchmarks/<name>/``, or a third party's package)
whose entry point in the ``memeval.benchmarks`` group names an object satisfying
:class:`Benchmark`. The core never branches on a benchmark's name: it looks the benchmark up
(:func:`memeval.benchmarks.benchmark`) and asks it. Each member's docstring states its contract;
``docs/benchmarks-extending.md`` walks through them.

The values here are the ones that cross the boundary: a file's :class:`Unit`, a grader's
identity (:class:`GraderInfo`), a grader computed without a model (:class:`ComputedGrader`), a
judge grader (:class:`JudgeGrader`), a score (:class:`Graded`) and a report table
(:class:`ScoreTable`). All are frozen.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from memeval.benchmarks.judging import JudgeRequest, PromptTemplate
from memeval.datasets.yamlout import ImportResult
from memeval.record import ProbeResult

T = TypeVar("T")
Row = tuple[str, str, str]
"""A table row: name, value (``pct`` text or ``–``), n."""
Score = Callable[[ProbeResult], float | None]
"""A question's score in [0, 1] under one grader, or None when unscored."""


@dataclass(frozen=True)
class Unit:
    """What the first pass over a file keeps of one element: its id (a question id, a
    conversation id …), the question ids it holds, and its earliest session date."""

    id: str
    question_ids: tuple[str, ...]
    earliest: datetime


@dataclass(frozen=True)
class GraderInfo:
    """A grader's identity for run.json: what it is, and the upstream rule it reproduces."""

    name: str
    version: str
    benchmark: str
    upstream_repo: str
    upstream_file: str
    upstream_commit: str
    rule: str

    def to_json(self) -> dict[str, str]:
        """The fields as a JSON object."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class Graded:
    """A computed grader's verdict on one answer: ``score`` in [0, 1], or None with ``reason``."""

    score: float | None
    reason: str | None = None


@dataclass(frozen=True)
class ComputedGrader:
    """A grader that needs no model (a token F1, an exact match).

    ``measure`` names what it scores in report titles (``F1``); ``grade`` scores one answered
    question (``probe.llm_answer`` is not None), or returns None when the grader does not apply
    to it (the probe is left as it is, with no entry in ``grades``). ``require`` raises
    :class:`~memeval.errors.UsageError` now for what grading would need later (a library that is
    not installed), so a run can refuse before its first engine or model call."""

    info: GraderInfo
    measure: str
    grade: Callable[[ProbeResult], Graded | None]
    require: Callable[[], None] | None = None


@dataclass(frozen=True)
class JudgeGrader:
    """A grader that asks a judge model about each answer, as the benchmark's authors do.

    ``templates`` turns the suite's template files by key (already resolved paths, keys among
    ``template_keys``) into the full set, shipped ones filling the rest; raises
    :class:`~memeval.errors.UsageError` for an unknown key or an unreadable file. ``plan`` is the
    judge call for one answered question, or the reason it is not judged (``skipped`` is the
    reason for a question the grader's rule leaves out; it is counted as skipped, not as
    unjudged). ``verdict`` reads a reply: True/False, or None when it holds no verdict
    (``no_verdict`` is then the recorded reason). ``official_model`` is the judge model upstream
    uses; ``max_tokens`` and ``json_reply`` are its sampling."""

    info: GraderInfo
    measure: str
    official_model: str
    max_tokens: int | None
    json_reply: bool
    template_keys: tuple[str, ...]
    no_verdict: str
    skipped: str | None
    templates: Callable[[Mapping[str, str]], dict[str, PromptTemplate]]
    plan: Callable[[ProbeResult, Mapping[str, PromptTemplate], str], JudgeRequest | str]
    verdict: Callable[[str], bool | None]


@dataclass(frozen=True)
class ScoreTable:
    """One report table: what it scores (its title), its rows (name, value, n) and notes under it."""

    title: str
    rows: tuple[Row, ...]
    notes: tuple[str, ...]


@runtime_checkable
class Benchmark(Protocol[T]):
    """A published benchmark as memeval reads, maps, grades and reports it. ``T`` is the typed
    value of one element of its file (the core never looks inside it)."""

    @property
    def name(self) -> str:
        """The registered name: the entry point's name, ``format:`` in a suite, ``benchmark.format`` in run.json."""

    @property
    def title(self) -> str:
        """How reports name it (``LoCoMo``)."""

    @property
    def variants(self) -> tuple[str, ...]:
        """Its published variants; the first is the default when the file does not say."""

    def parse(self, path: Path, index: int, raw: Any) -> T:
        """Element ``index`` (1-based) of the file's top-level JSON array as a typed value.

        Raises:
            UsageError: one line naming ``path``, the element and the field that is wrong.
        """

    def unit(self, item: T) -> Unit:
        """The unit ``item`` is run as (one scenario): its id, question ids and earliest date."""

    def variant(self, path: Path, first: T, wanted: str | None) -> str:
        """The file's variant, checked against ``wanted`` (None: found from the name or content).

        Raises:
            UsageError: a variant it does not have, or one the file's name or content contradicts
                (the message holds ``field 'variant'``).
        """

    def scenario_id(self, unit_id: str) -> str:
        """The scenario id a unit runs as (a spec id: letters, digits, ``_``, ``-``)."""

    def probe_id(self, question_id: str) -> str:
        """The probe id a question runs as."""

    def scenario(self, item: T, chosen: set[str], epoch: datetime, result: ImportResult) -> dict[str, Any] | None:
        """The scenario document (memeval's YAML language, as a mapping) for ``item`` and its
        questions in ``chosen``, threads dated in days from ``epoch``; None when none of them
        maps to a probe. Each chosen question that cannot map is added to ``result.unmapped``
        (``question_id``, ``question``, ``reason``); dropped turns are counted in
        ``result.dropped_turns``. The import writes it as YAML; a streamed suite builds it in
        memory: both give the same plan."""

    @property
    def import_notes(self) -> tuple[str, ...]:
        """What an imported suite's ``x-`` keys and placeholders mean (written as ``x-import_notes``)."""

    @property
    def import_extra(self) -> Mapping[str, Any]:
        """Further top-level keys an imported suite carries (``x-`` keys only, e.g. a category map)."""

    @property
    def import_message(self) -> str | None:
        """A line ``memeval import`` prints after verifying the file, or None."""

    @property
    def graders(self) -> tuple[GraderInfo, ...]:
        """Its official graders, in the order reports list them (run.json ``benchmark.graders``)."""

    @property
    def official_grader(self) -> str:
        """The grader ``memeval import`` writes and a mismatch error suggests."""

    @property
    def grader_note(self) -> str:
        """The comment above the ``grader:`` an import writes."""

    @property
    def computed(self) -> Mapping[str, ComputedGrader]:
        """Graders applied without a model, by name (each also listed in :attr:`graders`)."""

    @property
    def judges(self) -> Mapping[str, JudgeGrader]:
        """Judge graders, by name (each also listed in :attr:`graders`)."""

    @property
    def beside(self) -> Mapping[str, str]:
        """A judge grader and the computed grader reported beside it as a second, separately
        named score (LoCoMo: F1 beside mem0's J)."""

    @property
    def category_map(self) -> Mapping[str, str]:
        """The file's category ids by their names as probes record them (run.json
        ``benchmark.category_map``); empty when categories are names already."""

    @property
    def category_label(self) -> str:
        """What a table's first column lists (``category``, ``question type``)."""

    @property
    def category_source(self) -> str | None:
        """Where the category map comes from, shown after it in run.md (None: nothing to cite)."""

    @property
    def cluster_unit(self) -> str:
        """The default cluster unit of its suites: one of :data:`memeval.score.clusters.UNITS`."""

    @property
    def abstention(self) -> str | None:
        """How its abstention questions are scored (the scoring setup records it), or None."""

    def table(self, probes: Sequence[ProbeResult], title: str, grader: str | None, score: Score) -> ScoreTable:
        """The headline table its authors report, from the recall-phase ``probes`` scored by
        ``score`` (``grader``: the grader behind ``score``, None for a pack-level or matcher
        score). A bucket with n = 0 has no value, never 0%."""


__all__ = ["Benchmark", "ComputedGrader", "Graded", "GraderInfo", "JudgeGrader", "Row", "Score", "ScoreTable", "Unit"]
