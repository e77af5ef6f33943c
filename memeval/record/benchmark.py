"""What a run of a published benchmark (LongMemEval, LoCoMo) records about its source and grading."""

from __future__ import annotations

from dataclasses import dataclass

from memeval.record.answerer import CacheInfo, Consistency, Incurred
from memeval.record.codec import omitted


@dataclass(frozen=True)
class GraderRecord:
    """One grader the run applies or reports, and the upstream rule it follows."""

    name: str
    """The grader's name (``locomo-f1``, ``longmemeval-judge``, ``mem0-j``, …)."""
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
class TemplateUsed:
    """A judge prompt template the benchmark judge used, and for which questions."""

    key: str
    """The questions it judges (a LongMemEval question type or ``abstention``; ``j`` for mem0's J)."""
    name: str
    """The template's name (a shipped one's, or the user's file name without suffix)."""
    sha256: str
    """sha256 of the text actually used."""
    source: str
    """``shipped``, or the user's file as resolved."""


@dataclass(frozen=True)
class JudgeSampling:
    """The sampling a benchmark judge sends: its upstream's."""

    temperature: float
    """Sampling temperature."""
    max_tokens: int | None
    """Completion token limit (None: not sent, as upstream sends none)."""
    json_reply: bool
    """A JSON object reply was asked for (``response_format`` ``json_object``)."""


@dataclass(frozen=True)
class BenchmarkJudge:
    """A benchmark's judge grader run over the model answers (``--llm`` with a judge grader)."""

    grader: GraderRecord
    """The grader and the upstream rule it follows."""
    endpoint: str
    """The endpoint URL (no credentials)."""
    model: str
    """The model asked for."""
    official_model: str
    """The judge model upstream uses."""
    served: tuple[str, ...] | None
    """Model names the endpoint gave for the replies, fresh or cached (None: none given)."""
    sampling: JudgeSampling
    """Sampling sent with every call."""
    templates: tuple[TemplateUsed, ...]
    """Every template in use, by the questions it judges."""
    questions: int
    """Answered questions it was to judge (both phases)."""
    judged: int
    """Of them, given a verdict."""
    skipped: int
    """Left unscored by the grader's rule (mem0's J: category 5); never counted as wrong."""
    no_verdict: int
    """Judged without a verdict: a failed call, a call never made, or a reply the rule cannot read."""
    calls: int
    """Replies received (repeats included), fresh or cached."""
    cache: CacheInfo
    """The reply cache."""
    incurred: Incurred
    """What this run's judge calls cost."""
    stopped: str | None
    """Why the judge stopped early (one line); None when it did not."""
    consistency: Consistency | None = omitted(default=None)
    """Agreement of the verdicts over ``--judge-repeats`` (None: judged once)."""


@dataclass(frozen=True)
class BenchmarkInfo:
    """The benchmark file a run's questions came from (streamed or imported) and its graders."""

    format: str
    """The benchmark's registered name (``longmemeval``, ``locomo``, or an installed plugin's)."""
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
    judge: BenchmarkJudge | None = omitted(default=None)
    """The judge grader's run (None: the suite's grader needs no judge, or no model answered)."""
