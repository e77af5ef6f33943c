"""memeval's closed vocabularies, each defined once: a ``Literal`` type, and the tuple of its
values in order read off it (``typing.get_args``), never spelled a second time.

The spec (:mod:`memeval.spec.model`, :mod:`memeval.spec.checks`), the record
(:mod:`memeval.record.values`), the planner and scoring take them from here; the JSON Schemas'
enums are checked against them by ``tests/spec/test_vocab.py`` (the run schema's are generated
from the record, which uses these types).
"""

from __future__ import annotations

from typing import Literal, get_args

Phase = Literal["recall", "synthesis"]
"""When a probe runs: before synthesis (``recall``) or after it (``synthesis``)."""
PHASES: tuple[Phase, ...] = get_args(Phase)

Route = Literal["ask", "continue", "resume", "brief", "compact"]
"""The agent lifecycle call a probe is asked through."""
ROUTES: tuple[Route, ...] = get_args(Route)

Style = Literal["lexical", "paraphrase"]
"""Whether a probe's question shares words with its answer (``lexical``) or not."""
STYLES: tuple[Style, ...] = get_args(Style)

Match = Literal["word", "substring"]
"""How expected strings are found: on word boundaries (numbers as numbers) or as substrings."""
MATCHES: tuple[Match, ...] = get_args(Match)

ProbeStatus = Literal["scored", "errored", "unsupported"]
"""``scored``; ``errored`` (a call failed); ``unsupported`` (the engine lacks a capability)."""
PROBE_STATUSES: tuple[ProbeStatus, ...] = get_args(ProbeStatus)

ScenarioStatus = Literal["ok", "errored", "skipped"]
"""How a scenario ended."""
SCENARIO_STATUSES: tuple[ScenarioStatus, ...] = get_args(ScenarioStatus)

Unit = Literal["pct", "points", "usd", "count", "ms", "score", "tokens"]
"""A KPI's unit: percent, percentage points, US dollars, a count, milliseconds, a 0-1 score, tokens."""
UNITS: tuple[Unit, ...] = get_args(Unit)

Better = Literal["up", "down"]
"""Which way a KPI improves (None in a record: no better direction)."""
DIRECTIONS: tuple[Better, ...] = get_args(Better)

ProbeGroup = Literal["learning", "surprise", "conflicts", "freshness", "leaks", "abstention", "forgetting"]
"""A KPI group a probe may feed besides accuracy (a probe's ``groups:``)."""
PROBE_GROUPS: tuple[ProbeGroup, ...] = get_args(ProbeGroup)

KpiGroup = Literal["accuracy", ProbeGroup, "cost", "latency"]
"""The question a KPI answers; the order of :data:`KPI_GROUPS` is the order KPIs are listed in."""
KPI_GROUPS: tuple[KpiGroup, ...] = get_args(KpiGroup)

Target = Literal["all", KpiGroup]
"""What a flag profile of a matrix is meant to move: a KPI group, or ``all``."""
TARGETS: tuple[Target, ...] = get_args(Target)

ProbeQuestions = Literal["read_only", "isolated", "kept"]
"""What the scripted agent does with a probe's question: ``read_only`` (recall only), ``isolated``
(logged, then forgotten) or ``kept`` (logged and left)."""
PROBE_QUESTION_MODES: tuple[ProbeQuestions, ...] = get_args(ProbeQuestions)

Reply = Literal["neutral", "echo_memory"]
"""How the scripted agent replies where a thread gives no reply."""
REPLIES: tuple[Reply, ...] = get_args(Reply)

DroppedRoles = Literal["all", "user"]
"""Which turns of a compaction probe's dropped range are recalled: all of them, or the user's."""
DROPPED_ROLES: tuple[DroppedRoles, ...] = get_args(DroppedRoles)

DocumentSource = Literal["pdf", "markdown", "notion", "github", "web", "gmail", "slack", "drive"]
"""Where a document in a tenant's brain came from."""
DOCUMENT_SOURCES: tuple[DocumentSource, ...] = get_args(DocumentSource)

LearningKind = Literal["preference", "rule", "correction", "fact", "procedure"]
"""What an explicit learning is."""
LEARNING_KINDS: tuple[LearningKind, ...] = get_args(LearningKind)

ClusterUnit = Literal["scenario", "conversation", "haystack", "category", "route", "style", "probe"]
"""What a suite's cluster-bootstrap intervals resample as one cluster."""
CLUSTER_UNITS: tuple[ClusterUnit, ...] = get_args(ClusterUnit)

__all__ = [
    "CLUSTER_UNITS", "DIRECTIONS", "DOCUMENT_SOURCES", "DROPPED_ROLES", "KPI_GROUPS",
    "LEARNING_KINDS", "MATCHES", "PHASES", "PROBE_GROUPS", "PROBE_QUESTION_MODES", "PROBE_STATUSES", "REPLIES", "ROUTES",
    "SCENARIO_STATUSES", "STYLES", "TARGETS", "UNITS", "Better", "ClusterUnit", "DocumentSource",
    "DroppedRoles", "KpiGroup", "LearningKind", "Match", "Phase", "ProbeGroup", "ProbeQuestions",
    "ProbeStatus", "Reply", "Route", "ScenarioStatus", "Style", "Target", "Unit",
]
