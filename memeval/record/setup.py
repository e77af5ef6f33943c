"""The scoring setup: everything about a run that moves its score, apart from the memory under
test. Two runs are comparable when their setups agree except where the comparison says."""

from __future__ import annotations

from dataclasses import dataclass

from memeval.record.answerer import Prompt, Sampling
from memeval.record.benchmark import JudgeSampling
from memeval.record.codec import Json, JsonObject, omitted  # noqa: F401 (Json: JsonObject's forward reference resolves here)


@dataclass(frozen=True)
class DatasetSetup:
    """The imported dataset a suite was built from."""

    name: str
    """The dataset (locomo, longmemeval, …)."""
    variant: str | None
    """Its variant or file (e.g. longmemeval_s, cleaned; None: the only one)."""
    sha256: str | None
    """sha256 of the source file (None: not recorded)."""


@dataclass(frozen=True)
class GradingSetup:
    """How answers and packs are graded."""

    match: str
    """The suite's match mode (word, substring)."""
    window: int
    """The last N turns of a thread that must not be recalled."""
    grader: str
    """The grader and its version (``memeval-<version>`` for memeval's own matcher)."""


@dataclass(frozen=True)
class PackSetup:
    """The pack policy: budget and items per section."""

    budget_tokens: int
    """Pack budget, tokens (chars/4)."""
    learnings: int
    """Items in the Learnings section."""
    brain: int
    """Items in the Brain section."""
    history: int
    """Items of the agent's own history."""
    team: int
    """Team conversations."""


@dataclass(frozen=True)
class ModelSetup:
    """A model behind a prompt: what moves its answers or verdicts."""

    model: str
    """The model name."""
    prompt: Prompt
    """The prompt template."""
    sampling: Sampling
    """Sampling settings."""


@dataclass(frozen=True)
class GraderJudgeSetup:
    """A benchmark's judge grader: what moves its verdicts."""

    grader: str
    """The grader and its version (``longmemeval-judge-1``)."""
    model: str
    """The judge model asked for."""
    sampling: JudgeSampling
    """Its sampling."""
    templates: dict[str, str]
    """Each template's sha256 by the questions it judges."""


@dataclass(frozen=True)
class EngineSetup:
    """The memory under test: engine, adapter and server versions, flags and settings."""

    name: str
    """The engine name."""
    version: str
    """The adapter's version."""
    server_version: str | None
    """The server's version (None: no server, or it does not say)."""
    flags: dict[str, str]
    """Configuration flags."""
    settings: JsonObject
    """The adapter's own settings."""


@dataclass(frozen=True)
class Setup:
    """The scoring setup of a run; :func:`memeval.score.setup.fingerprint` summarises it."""

    suite: str
    """The suite name."""
    spec_sha256: str
    """sha256 over the resolved spec (scenarios, probes, expectations)."""
    dataset: DatasetSetup | None
    """The dataset it was imported from (None: memeval's own suite)."""
    grading: GradingSetup
    """How answers and packs are graded."""
    pack: PackSetup
    """The pack policy."""
    answer: ModelSetup | None
    """The answer model (None without ``--llm``)."""
    judge: ModelSetup | None
    """The judge model (None without ``--judge``)."""
    engine: EngineSetup
    """The memory under test."""
    grader_judge: GraderJudgeSetup | None = omitted(default=None)
    """The benchmark's judge grader (None: none ran; left out, so older fingerprints stay as they were)."""
