"""One probe's result in one phase: what was asked, what the pack held, and how it was graded.

Only a ``scored`` probe carries numbers; for ``errored`` and ``unsupported`` every measured field
is None (null), never 0 or false.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from memeval.record.codec import Fraction, JsonObject, Positive, flat, omitted
from memeval.record.values import Match, Phase, ProbeGroup, ProbeStatus, Route, Style


@dataclass(frozen=True)
class AnswerCall:
    """What the model answerer's call for one probe left (keys present once ``--llm`` ran on it)."""

    llm_cached: bool | None
    """The answer came from the answer cache (None: no answer)."""
    llm_error: str | None
    """Why the probe has no model answer (a failed call, or the answerer stopped); None when answered."""


@dataclass(frozen=True)
class JudgeMark:
    """The LLM judge's verdict on one probe (key present once a judge ran over the run)."""

    llm_judge_ok: bool | None
    """The judge accepts the model answer (None: not answered, or no verdict)."""


@dataclass(frozen=True)
class ProbeResult:
    """One probe run: the probe as the spec gave it, its status, its grading and its pack."""

    scenario: str
    """The scenario id."""
    phase: Phase
    """The phase it ran in."""
    id: str
    """The probe id (unique within its scenario)."""
    route: Route
    """The lifecycle call it was asked through."""
    style: Style
    """Lexical or paraphrased question."""
    groups: tuple[ProbeGroup, ...]
    """The KPI groups it feeds besides accuracy."""
    abstain: bool
    """The right answer is "unknown": nothing may be invented."""
    question: str
    """The question asked."""
    expect: tuple[str, ...]
    """Strings the pack and answer must hold."""
    accept: tuple[tuple[str, ...], ...]
    """Alternative string sets, each as good as ``expect``."""
    stale: tuple[str, ...]
    """Outdated values that must not win over the current one."""
    forbid: tuple[str, ...]
    """Strings the pack must not hold (another tenant's, forgotten or invented)."""
    match: Match
    """How strings are matched."""
    status: ProbeStatus
    """Scored, errored or unsupported."""
    reason: str | None
    """Why it was not scored (one line); None when scored."""
    hit: bool | None
    """The pack holds every expected string (or an accepted set)."""
    rank: Positive | None
    """1-based rank of the first pack unit holding the first expected string; None: not found."""
    rr: Fraction | None
    """Reciprocal rank (0.0 for a miss)."""
    section: str | None
    """The pack section the ranked unit sits in."""
    stale_present: bool | None
    """A stale value is in the pack (None: the probe has no stale values)."""
    stale_first: bool | None
    """A stale value ranks above the current one."""
    fresh_first: bool | None
    """The current value is found and ranks above every stale one."""
    leak_checked: bool
    """The pack was checked for forbidden strings (a non-abstention probe with ``forbid``)."""
    leak: bool | None
    """A forbidden string is in the pack (None: not checked)."""
    leaked: tuple[str, ...]
    """The forbidden strings found (invented ones for an abstention probe)."""
    invented: bool | None
    """An abstention probe's pack holds a forbidden string (None: not an abstention probe)."""
    answer: str | None
    """The extractive answer taken from the pack."""
    answer_ok: bool | None
    """The extractive answer grades correct."""
    llm_answer: str | None
    """The model's answer (``--llm``)."""
    llm_ok: bool | None
    """The model answer grades correct (None: not answered)."""
    llm_tokens: int | None
    """Prompt + completion tokens of the model answer."""
    llm_cost_usd: float | None
    """Cost of the model answer in USD (None: unknown)."""
    captured: bool | None
    """After synthesis, the engine's facts and beliefs hold the expected strings (None: not inspected)."""
    ms: float | None
    """Wall time of the probe's route call, ms."""
    tokens: int | None
    """Pack size in tokens."""
    units: int | None
    """Number of units (list items) in the pack."""
    pack: str | None
    """The whole pack (Markdown) the engine returned."""
    call: AnswerCall | None = flat(default=None)
    """The answerer's call (``llm_cached``, ``llm_error``); None before ``--llm``."""
    judge: JudgeMark | None = flat(default=None)
    """The judge's verdict (``llm_judge_ok``); None before a judge ran."""
    category: str | None = omitted(default=None)
    """The benchmark question type or category, by its real name (None: the probe names none)."""
    evidence_recall: Fraction | None = omitted(default=None)
    """The fraction of the probe's evidence turns whose text is in the pack (None: no evidence, or not scored)."""
    grader_score: Fraction | None = omitted(default=None)
    """The model answer's score in [0, 1] by the suite's benchmark grader (None: not answered, or not applied)."""
    haystack_tokens: int | None = omitted(default=None)
    """Tokens (chars/4) the scenario wrote to the probe's tenant: its haystack (None: not recorded, see ``RunRecord.migrated``)."""
    haystack_items: int | None = omitted(default=None)
    """Items (documents, learnings, turns) the scenario wrote to the probe's tenant (None: not recorded, see ``RunRecord.migrated``)."""
    disputed: bool | None = omitted(default=None)
    """True: the suite's errata file disputes its gold, so no headline rate counts it (None: not disputed)."""
    grader_reason: str | None = omitted(default=None)
    """Why an answered question has no ``grader_score`` (a skipped category, a failed call, no verdict); else None."""
    grades: dict[str, Fraction | None] | None = omitted(default=None)
    """Each benchmark grader's score of the answer by grader name (LoCoMo: ``locomo-f1`` beside ``mem0-j``; None: none)."""
    asked_at: str | None = omitted(default=None)
    """When the question is asked, ISO 8601 without a zone (a benchmark's question date; None: undated)."""
    gold: str | None = omitted(default=None)
    """The benchmark's gold answer for its judge where it is not ``expect[0]`` (an ``_abs`` explanation; None: expect[0])."""

    schema_rules: ClassVar[JsonObject] = {
        "if": {"properties": {"status": {"const": "scored"}}},
        "then": {"properties": {"pack": {"type": "string"}, "ms": {"type": "number"}}},
        "else": {"properties": {"hit": {"type": "null"}, "rr": {"type": "null"}, "answer_ok": {"type": "null"},
                                "reason": {"type": "string"}}},
    }
    """What run.schema.json adds across fields: a scored probe has its pack and time; another has a reason and no grade."""

    @property
    def key(self) -> tuple[str, str, str]:
        """The probe's identity across runs: (scenario, probe id, phase)."""
        return (self.scenario, self.id, self.phase)

    @property
    def scored(self) -> bool:
        """Whether the probe was scored (it alone carries numbers)."""
        return self.status == "scored"

    @property
    def judged_ok(self) -> bool | None:
        """The judge's verdict, None when not judged."""
        return self.judge.llm_judge_ok if self.judge else None
