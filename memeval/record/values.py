"""The closed vocabularies of a run record: statuses, routes, styles, phases, units, directions,
KPI groups, and the timing labels every latency sample is filed under."""

from __future__ import annotations

import enum
from typing import Literal

Phase = Literal["recall", "synthesis"]
"""When a probe ran: before synthesis (``recall``) or after it (``synthesis``)."""
PHASES: tuple[Phase, ...] = ("recall", "synthesis")

Route = Literal["ask", "continue", "resume", "brief", "compact"]
"""The agent lifecycle call a probe is asked through."""

Style = Literal["lexical", "paraphrase"]
"""Whether a probe's question shares words with its answer (``lexical``) or not."""
STYLES: tuple[Style, ...] = ("lexical", "paraphrase")

Match = Literal["word", "substring"]
"""How expected strings are found: on word boundaries (numbers as numbers) or as substrings."""

ProbeStatus = Literal["scored", "errored", "unsupported"]
"""``scored``; ``errored`` (a call failed); ``unsupported`` (the engine lacks a capability)."""

ScenarioStatus = Literal["ok", "errored", "skipped"]
"""How a scenario ended."""

Unit = Literal["pct", "points", "usd", "count", "ms", "score", "tokens"]
"""A KPI's unit: percent, percentage points, US dollars, a count, milliseconds, a 0-1 score, tokens."""

Better = Literal["up", "down"]
"""Which way a KPI improves (None in a record: no better direction)."""

KpiGroup = Literal["accuracy", "learning", "surprise", "conflicts", "freshness", "leaks", "abstention",
                   "forgetting", "cost", "latency"]
"""The question a KPI answers; the order of :data:`KPI_GROUPS` is the order KPIs are listed in."""
KPI_GROUPS: tuple[KpiGroup, ...] = ("accuracy", "learning", "surprise", "conflicts", "freshness", "leaks",
                                    "abstention", "forgetting", "cost", "latency")


class TimingLabel(enum.StrEnum):
    """Every label a latency sample (ms) is recorded under; the values are run.json's keys."""

    WARMUP = "warm-up"  # the run's one write, recall and forget before the first scenario: in no KPI
    BRAIN_INGEST = "brain ingest"
    LEARNING_WRITE = "learning write"
    PRE_TURN_LOGGED = "pre_turn (log + recall)"
    PRE_TURN = "pre_turn (recall)"
    POST_TURN = "post_turn (log)"
    REPLAY = "replay (a thread written as it stands)"
    START_SESSION = "start_session"
    COMPACTION = "recall_for_compaction"
    BRIEF = "context brief"
    SETTLE = "settle (all writes listed)"
    BUILDS = "synthesis (all builds)"
    DRAIN = "enrichment (queue drained)"
    FIXED_WAIT = "enrichment (fixed wait)"
    PROBE_ASK = "probe ask"
    PROBE_CONTINUE = "probe continue"
    PROBE_RESUME = "probe resume"
    PROBE_BRIEF = "probe brief"
    PROBE_COMPACT = "probe compact"

    @classmethod
    def probe(cls, route: Route) -> "TimingLabel":
        """The label a probe asked through ``route`` is timed under."""
        return cls(f"probe {route}")

    @property
    def is_pre_turn(self) -> bool:
        """A pre-turn recall (logged or not): the ``pre_turn`` latency KPIs."""
        return self in (TimingLabel.PRE_TURN_LOGGED, TimingLabel.PRE_TURN)

    @property
    def is_probe(self) -> bool:
        """A whole probe through its route: the ``probe`` latency KPIs."""
        return self.value.startswith("probe ")
