"""The typed, frozen spec: what the loader hands to the planner. No raw dicts past this point."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memeval.vocab import (PHASES, DocumentSource, DroppedRoles, LearningKind, Match, Phase,
                           ProbeGroup, ProbeQuestions, Reply, Route, Style)


@dataclass(frozen=True)
class Origin:
    """Where a value was written: file, 1-based line and column, and its JSON path in the file
    (``probes[2]``); only file and line are shown."""

    file: str
    line: int
    column: int = 0
    path: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Agent:
    """An agent: its id and the tenant whose memory it uses."""

    id: str
    tenant: str
    role: str = ""


@dataclass(frozen=True)
class Document:
    """A document in a tenant's brain, from a named source; ``day`` None means undated."""

    id: str
    tenant: str
    source: DocumentSource
    title: str
    text: str
    day: int | None = None


@dataclass(frozen=True)
class Learning:
    """An explicit learning stored at the tenant's learnings node."""

    id: str
    tenant: str
    kind: LearningKind
    text: str
    confidence: float | None = None
    day: int | None = None


@dataclass(frozen=True)
class Tool:
    """A scripted tool call; ``carried`` says whether the reply repeats its result."""

    name: str
    result: str
    carried: bool = True


@dataclass(frozen=True)
class Exchange:
    """One user turn and the agent's reply (scripted when ``reply`` is None). ``ids`` name the
    user turn and the reply (a benchmark's turn ids, which a probe's ``evidence`` cites)."""

    user: str
    reply: str | None = None
    tools: tuple[Tool, ...] = ()
    ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Thread:
    """A conversation of one agent, starting ``day`` days and ``start_s`` seconds (its time of
    day) after the epoch. A ``replay`` thread is past conversation: its turns are written as
    they stand (batched where the engine allows), without the agent's recall before each turn."""

    id: str
    tenant: str
    agent: str
    day: int
    exchanges: tuple[Exchange, ...]
    start_s: float = 0.0
    replay: bool = False

    @property
    def turns(self) -> int:
        """Number of turns written (user and reply for each exchange)."""
        return 2 * len(self.exchanges)


@dataclass(frozen=True)
class Probe:
    """A question asked through one lifecycle route, and what a good pack and answer hold.

    ``accept`` holds alternatives, each a tuple of strings that must all appear.
    """

    id: str
    route: Route
    agent: str
    tenant: str
    question: str
    style: Style
    expect: tuple[str, ...] = ()
    accept: tuple[tuple[str, ...], ...] = ()
    stale: tuple[str, ...] = ()
    forbid: tuple[str, ...] = ()
    abstain: bool = False
    thread: str | None = None
    focus: str | None = None
    dropped: tuple[int, int] | None = None
    dropped_roles: DroppedRoles = "all"
    heading: str | None = None
    leak_only: bool = False
    groups: tuple[ProbeGroup, ...] = ()
    phases: tuple[Phase, ...] = PHASES
    match: Match = "word"
    origin: Origin | None = None
    category: str | None = None
    evidence: tuple[str, ...] = ()
    answer_only: bool = False
    asked_at: str | None = None
    """When the question is asked (ISO 8601, no zone; a benchmark's question date); None: undated."""
    gold: str | None = None
    """The benchmark's gold answer for a judge grader, where it is not ``expect[0]``; with no
    ``expect`` (and no abstention) the probe is *judged*: only the judge grader scores its model
    answer (a LongMemEval preference rubric), and its pack hit and answers stay None."""

    @property
    def scored(self) -> bool:
        """Whether the probe has something to score (an expectation, an abstention, a judged
        probe's gold or, for a leak-only probe, its forbidden strings)."""
        return bool(self.expect) or self.abstain or self.leak_only or self.gold is not None

    @property
    def checks_forgetting(self) -> bool:
        """Whether the probe checks what the scenario's declared forgets removed: on an engine
        that made none it has nothing to check (it is then unsupported, not a miss)."""
        return "forgetting" in self.groups


@dataclass(frozen=True)
class Scenario:
    """One piece of agent work and the probes about it."""

    id: str
    about: str
    tenants: tuple[str, ...]
    agents: tuple[Agent, ...] = ()
    documents: tuple[Document, ...] = ()
    learnings: tuple[Learning, ...] = ()
    threads: tuple[Thread, ...] = ()
    forget: tuple[str, ...] = ()
    probes: tuple[Probe, ...] = ()
    origin: Origin | None = None

    def thread(self, thread_id: str, tenant: str | None = None) -> Thread:
        """The thread with that id, the one in ``tenant`` first (thread ids are unique per tenant;
        the loader guarantees the thread exists, and is not ambiguous, where referenced)."""
        found = [t for t in self.threads if t.id == thread_id]
        return next((t for t in found if t.tenant == tenant), found[0])


@dataclass(frozen=True)
class Defaults:
    """Timing defaults for a run."""

    epoch: str = "2026-09-01T09:00:00Z"
    turn_spacing_s: float = 60.0
    settle_timeout_s: float = 90.0
    settle_poll_s: float = 0.2
    enrich_wait_s: float | None = None
    window: int = 8


@dataclass(frozen=True)
class Policy:
    """Pack policy: budget in tokens (chars/4) and items per section."""

    budget_tokens: int = 1200
    learnings: int = 8
    brain: int = 6
    history: int = 6
    team: int = 3
    build_beliefs_every: int | None = None
    """post_turn builds beliefs when (turn index + 1) % N == 0 (engines with ``beliefs``)."""


@dataclass(frozen=True)
class AgentOptions:
    """Declared side effects of the scripted agent (see the suite schema): ``probe_questions``
    is ``read_only``, ``isolated`` (logged, then forgotten) or ``kept`` (logged and left)."""

    reply: Reply = "neutral"
    probe_questions: ProbeQuestions = "read_only"


@dataclass(frozen=True)
class DatasetSource:
    """A published benchmark file a suite streams at run time (``dataset:``), verified at load.

    ``path`` is resolved against the suite file's folder; ``variant`` and ``sha256`` are what the
    file was verified to be (the declared values, or the ones found when none was declared).
    ``questions`` are the selected question ids and ``units`` the scenario ids they run as, in
    file order; ``epoch`` is the suite epoch the unit threads are dated from.
    """

    format: str
    path: str
    variant: str
    sha256: str
    questions: tuple[str, ...]
    units: tuple[str, ...]
    epoch: str
    only: tuple[str, ...] = ()
    limit: int | None = None
    sample: int | None = None
    seed: int = 0
    grader: str | None = None
    prompts: tuple[tuple[str, str], ...] = ()
    """The suite's own judge templates: (key, file resolved against the suite's folder)."""
    origin: Origin | None = None
    keys: tuple[tuple[str, str, str], ...] = ()
    """Every question of the file (selected or not) as (question id, scenario id, probe id)."""


@dataclass(frozen=True)
class Erratum:
    """One disputed gold answer of an errata file."""

    id: str
    """The question id (or SCENARIO/PROBE, probe id, x-question_id) as the file writes it."""
    source: str
    """Where the dispute is documented: a URL or a citation."""
    reason: str
    """Why the gold is disputed."""
    origin: Origin | None = None
    """Where the entry sits in the errata file."""


@dataclass(frozen=True)
class Errata:
    """A suite's errata file, resolved against what the suite runs.

    ``disputed`` are the (scenario id, probe id) pairs of the entries the suite runs, with their
    erratum; ``unselected`` the entries naming a question of the dataset this run does not
    select; ``unknown`` the entries naming nothing in the suite or its dataset (a warning, an
    error under ``memeval validate --strict``).
    """

    file: str
    sha256: str
    covers: str
    entries: tuple[Erratum, ...]
    disputed: tuple[tuple[str, str, Erratum], ...]
    unselected: tuple[Erratum, ...] = ()
    unknown: tuple[Erratum, ...] = ()


@dataclass(frozen=True)
class Noise:
    """A suite's haystack noise (:mod:`memeval.spec.noise`): its seed, its size per tenant in
    tokens and, when drawn from a file in the suite's folder, that file (absolute) and paragraphs."""

    seed: int
    tokens: int
    file: str | None = None
    paragraphs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Suite:
    """A loaded, validated suite. ``sha256`` covers every file read, in order, and the dataset's sha256."""

    name: str
    about: str
    scenarios: tuple[Scenario, ...]
    defaults: Defaults = field(default_factory=Defaults)
    policy: Policy = field(default_factory=Policy)
    agent: AgentOptions = field(default_factory=AgentOptions)
    match: Match = "word"
    llm: dict[str, Any] = field(default_factory=dict)
    gates: dict[str, str] = field(default_factory=dict)
    """CI gates as written: KPI slug → condition (``">= 0.9"``); checked by memeval.report.gates."""
    source: str = ""
    files: tuple[str, ...] = ()
    sha256: str = ""
    resolved: dict[str, Any] = field(default_factory=dict)
    dataset: DatasetSource | None = None
    errata: Errata | None = None
    """The disputed gold answers the suite declares (``errata:`` or ``dataset.errata``)."""
    noise: Noise | None = None
    """The distractors written to every tenant before a scenario's own items (``noise:``; None: none)."""

    @property
    def scenario_ids(self) -> tuple[str, ...]:
        """Every scenario id a run can take: the inline and included ones, then the dataset's units."""
        return tuple(s.id for s in self.scenarios) + (self.dataset.units if self.dataset else ())
