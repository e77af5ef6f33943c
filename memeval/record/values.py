"""The closed vocabularies of a run record: statuses, routes, styles, phases, units, directions and
KPI groups (defined once, in :mod:`memeval.vocab`), and the timing labels every latency sample is
filed under."""

from __future__ import annotations

import enum

from memeval.vocab import (KPI_GROUPS, PHASES, STYLES, Better, KpiGroup, Match, Phase, ProbeGroup, ProbeStatus, Route,
                           ScenarioStatus, Style, Unit)

__all__ = ["KPI_GROUPS", "PHASES", "STYLES", "Better", "KpiGroup", "Match", "Phase", "ProbeGroup", "ProbeStatus", "Route",
           "ScenarioStatus", "Style", "TimingLabel", "Unit"]


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
