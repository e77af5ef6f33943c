"""What ``--llm`` records about the model answerer and its judge (never a credential)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from memeval.record.codec import Keywords, NonNegative, omitted


@dataclass(frozen=True)
class Prompt:
    """A packaged prompt template."""

    name: str
    """Its name (e.g. answer-v1)."""
    sha256: str
    """sha256 of its text."""


@dataclass(frozen=True)
class Sampling:
    """The sampling settings sent with every call."""

    temperature: float
    """Sampling temperature."""
    max_tokens: int
    """Completion token limit."""


@dataclass(frozen=True)
class CacheInfo:
    """The answer cache as the run used it."""

    enabled: bool
    """Whether answers were cached."""
    salt: str | None
    """The salt keeping these answers apart (None: none)."""
    hits: int
    """Answers served by cache entries an earlier run (or repeat) wrote: cross-run hits."""
    misses: int
    """Answers asked of the model."""
    reused: int | None = omitted(default=None)
    """Answers reused in-run from an identical prompt this run already asked, marked cached (None: not recorded, see ``RunRecord.migrated``)."""


@dataclass(frozen=True)
class Incurred:
    """What this run's own HTTP calls cost (cached answers cost nothing)."""

    calls: int
    """Fresh answers."""
    requests: int
    """HTTP requests sent (retries included)."""
    retries: int
    """Requests sent again."""
    prompt_tokens: int | None
    """Prompt tokens (None: some reply did not say)."""
    completion_tokens: int | None
    """Completion tokens (None: unknown)."""
    tokens: int | None
    """All tokens (None: unknown)."""
    cost_usd: float | None
    """USD (None: unknown)."""
    served: tuple[str, ...] | None = omitted(default=None)
    """Model names the endpoint gave for this run's answers, fresh or cached (a mock's start with ``mock-``; None: none)."""


@dataclass(frozen=True)
class ModelSide:
    """One model behind one prompt, as recorded: endpoint, model, prompt, settings, cache, spend."""

    endpoint: str
    """The endpoint URL (no credentials)."""
    model: str
    """The model name."""
    prompt: Prompt
    """The prompt template."""
    sampling: Sampling
    """Sampling settings."""
    concurrency: int
    """Calls in flight at once."""
    timeout_s: float
    """Per-call timeout, s."""
    retries: int
    """Retries allowed per call."""
    cache: CacheInfo
    """The answer cache."""
    incurred: Incurred
    """What this run's calls cost."""


@dataclass(frozen=True)
class Count:
    """k of n."""

    k: int
    """Successes."""
    n: int
    """Cases with a verdict."""


@dataclass(frozen=True)
class Agreement:
    """How often the judge agrees with the substring grader."""

    agree: int
    """Answers both graded the same."""
    n: int
    """Answers both graded."""
    kappa: float | None = omitted(default=None)
    """Cohen's κ over the same answers: agreement beyond chance (None: undefined, or not recorded: see ``RunRecord.migrated``)."""


@dataclass(frozen=True)
class Planted:
    """A planted wrong answer the judge accepted."""

    scenario: str
    """The probe's scenario."""
    id: str
    """The probe id."""
    kind: str
    """What the planted answer was (stale, unknown, invented, other probe's answer)."""
    answer: str
    """The planted answer."""


@dataclass(frozen=True)
class Leniency:
    """The leniency check: planted wrong answers the judge must reject."""

    rejected: int
    """Planted answers rejected."""
    n: int
    """Planted answers given a verdict."""
    planted: int
    """Planted answers asked about."""
    accepted: tuple[Planted, ...]
    """The planted answers it accepted."""


@dataclass(frozen=True)
class Consistency:
    """Self-consistency of a judge over repeated judging of the same answers (``--judge-repeats``)."""

    repeats: Annotated[int, Keywords(minimum=2)]
    """How many times each answer was judged (distinct cache salts, so every call was made)."""
    unanimous: NonNegative
    """Answers whose verdicts agree in every repeat."""
    n: NonNegative
    """Answers with a verdict in every repeat."""
    fleiss_kappa: float | None
    """Fleiss' κ over those answers, the repeats as raters (None: undefined, e.g. every verdict the same)."""


@dataclass(frozen=True)
class JudgeSummary(ModelSide):
    """The LLM judge's run over the model answers."""

    calls: int
    """Verdicts returned (leniency checks and ``--judge-repeats`` included)."""
    tokens: int | None
    """Tokens of those calls (None: unknown)."""
    cost_usd: float | None
    """Their cost, USD (None: unknown)."""
    accepted: Count
    """Model answers the judge accepted, of those it gave a verdict on."""
    agreement: Agreement
    """Agreement with the substring grader."""
    leniency: Leniency
    """The leniency check."""
    stopped: str | None
    """Why the judge stopped early (one line); None when it did not."""
    consistency: Consistency | None = omitted(default=None)
    """Agreement of the verdicts over ``--judge-repeats`` (None: judged once)."""


@dataclass(frozen=True)
class Answerer(ModelSide):
    """The model answerer over every scored probe."""

    probes: int
    """Probes it was to answer."""
    answered: int
    """Probes answered."""
    failed: int
    """Probes whose call failed."""
    not_answered: int
    """Probes without an answer (failed or never asked)."""
    calls: int
    """Answers (fresh or cached)."""
    prompt_tokens: int | None
    """Prompt tokens over the answers (None: unknown or nothing answered)."""
    completion_tokens: int | None
    """Completion tokens over the answers."""
    tokens: int | None
    """All tokens over the answers."""
    cost_usd: float | None
    """USD over the answers (None: some cost unknown, or nothing answered)."""
    stopped: str | None
    """Why the answerer stopped early (one line); None when it did not."""
    judge: JudgeSummary | None
    """The judge, when ``--judge`` ran."""

