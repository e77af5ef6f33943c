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
    category_map: dict[str, str] | None = omitted(default=None)
    """The benchmark's category ids by the names the KPIs use (None: it has none)."""
    abstention: str | None = omitted(default=None)
    """How abstention questions (LongMemEval ``_abs``, LoCoMo category 5) are scored (None: no policy)."""


@dataclass(frozen=True)
class GradingSetup:
    """How answers and packs are graded."""

    match: str
    """The suite's match mode (word, substring)."""
    window: int
    """The last N turns of a thread that must not be recalled."""
    grader: str
    """The grader and its version (``memeval-<version>`` for memeval's own matcher)."""
    upstream: tuple[str, ...] | None = omitted(default=None)
    """The upstream rule each benchmark grader and judge follows, ``name version: repo file @ commit`` (None: no benchmark)."""
    cluster: str | None = omitted(default=None)
    """The unit the cluster-bootstrap intervals and clustered tests resample (scenario, conversation, haystack, …; None: not recorded, see ``RunRecord.migrated``)."""


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
class RetrievalSetup:
    """The retrieval depth the suite allows relative to its haystacks (what a top-k is to a corpus)."""

    budget_tokens: int
    """The pack budget, tokens."""
    pack_items: int
    """Items a pack may hold (learnings + brain + history + team)."""
    tokens_stored: float
    """Mean tokens written to a probe's tenant (its haystack)."""
    items_stored: float
    """Mean items (documents, learnings, turns) written to a probe's tenant."""
    budget_share: float | None
    """budget_tokens / tokens_stored, at most 1: the share of a haystack a full pack can hold."""
    items_share: float | None
    """pack_items / items_stored, at most 1."""


@dataclass(frozen=True)
class NoiseSetup:
    """The haystack noise written before every scenario's own items (the suite's ``noise:``)."""

    seed: int
    """The seed the distractors come from."""
    tokens: int
    """Their size per tenant, tokens."""
    file: str | None
    """The file they were drawn from, as the suite names it (None: generated)."""


@dataclass(frozen=True)
class ErrataSetup:
    """The errata file whose disputed gold is scored apart."""

    sha256: str
    """sha256 of the errata file."""
    count: int
    """Entries in it."""


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
    retrieval: RetrievalSetup | None = omitted(default=None)
    """The retrieval depth relative to the haystack (None: the haystacks are not in the resolved spec, e.g. a streamed dataset)."""
    errata: ErrataSetup | None = omitted(default=None)
    """The errata file (None: the suite declares none)."""
    grader_judge: GraderJudgeSetup | None = omitted(default=None)
    """The benchmark's judge grader (None: none ran; left out, so older fingerprints stay as they were)."""
    noise: NoiseSetup | None = omitted(default=None)
    """The haystack noise (None: none; left out, so older fingerprints stay as they were)."""
