"""The run record (run.json): the run, its suite and engine, every scenario and probe, timings,
and what scoring derived from them (totals, latency, KPIs)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

import memeval.record.codec as codec
from memeval.record.answerer import Answerer
from memeval.record.benchmark import BenchmarkInfo
from memeval.record.errata import ErrataRecord
from memeval.record.migrate import Migrated, upgrade
from memeval.record.codec import Json, JsonObject, NonNegative, Positive, RecordError, Sha256, omitted
from memeval.record.probe import ProbeResult
from memeval.record.scenario import ScenarioResult, Usage
from memeval.record.setup import Setup
from memeval.record.values import Better, KpiGroup, Phase, Style, TimingLabel, Unit

FORMAT_VERSION: Literal[2] = 2
"""The run.json format this memeval writes; older ones are upgraded on read (:mod:`memeval.record.migrate`)."""


@dataclass(frozen=True)
class SuiteInfo:
    """The suite as run: its name, its files and hash, and the resolved spec."""

    name: str
    """The suite name."""
    about: str
    """Its one-line description."""
    source: str
    """The suite file as given."""
    files: tuple[str, ...]
    """Every spec file it was loaded from."""
    sha256: Sha256
    """sha256 over the resolved spec."""
    resolved: JsonObject
    """The whole spec after includes and defaults."""


@dataclass(frozen=True)
class EngineSnapshot:
    """The engine as it described itself when the run started."""

    name: str
    """The engine name."""
    version: str
    """The adapter's version."""
    capabilities: tuple[str, ...]
    """Capabilities, sorted."""
    server_version: str | None
    """The server's version (None: no server, or it does not say)."""
    server_capabilities: tuple[str, ...]
    """What the server reported it can do."""
    flags: dict[str, str]
    """Configuration flags the server reported."""
    settings: JsonObject
    """The adapter's own settings (ranking, embedder, …)."""


@dataclass(frozen=True)
class Options:
    """The run options as resolved."""

    engine: str
    """The engine name."""
    only: tuple[str, ...]
    """Scenario ids run (empty: all)."""
    keep: bool
    """Writes were left in the engine (``--keep``)."""
    enrich_wait_s: float | None
    """Longest enrichment wait, s (None: no wait)."""
    settle_timeout_s: float | None
    """Settle timeout override, s (None: the suite's)."""
    llm: bool
    """A model answered the probes (``--llm``)."""
    jobs: Positive
    """Scenarios run at once on threads sharing the engine (``--jobs``; 1: one after another), so latencies were measured under that concurrency."""


@dataclass(frozen=True)
class RateValue:
    """k of n with its value and 95% Wilson interval (both fractions; None for n = 0)."""

    k: int
    """Successes."""
    n: int
    """Cases counted."""
    value: float | None
    """k / n."""
    ci95: tuple[float, float] | None
    """The 95% Wilson interval."""


@dataclass(frozen=True)
class MeanValue:
    """A mean over n values (None for n = 0)."""

    value: float | None
    """The mean."""
    n: int
    """Values averaged."""


@dataclass(frozen=True)
class Totals:
    """Counts and rates over a set of probe results (one phase; a scenario or a style of it)."""

    probes: int
    """Probe results."""
    scored: int
    """Of them scored."""
    errored: int
    """Errored."""
    unsupported: int
    """Unsupported."""
    pack_hit: RateValue
    """Pack hits of scored non-abstention probes."""
    mrr: MeanValue
    """Mean reciprocal rank of the same probes."""
    extractive: RateValue
    """Extractive answers correct."""
    model: RateValue
    """Model answers correct."""
    captured: RateValue
    """Expected strings captured in the derived layers."""
    fresh_first: RateValue
    """Current value ranked above stale ones."""
    leaks: RateValue
    """Packs leaking a forbidden string, of those checked."""
    abstained: RateValue
    """Packs inventing nothing, of the abstention probes checked (the KPI "pack invents nothing")."""
    pack_tokens: MeanValue
    """Mean pack size, tokens."""


@dataclass(frozen=True)
class PhaseTotals:
    """The totals of one phase: over all probes, per scenario, per question style."""

    all: Totals
    """Every probe of the phase."""
    scenarios: dict[str, Totals]
    """Per scenario id, in run order."""
    styles: dict[Style, Totals]
    """Per question style."""


@dataclass(frozen=True)
class MissingCapability:
    """A capability the run would have used that the engine does not declare, and what it cost."""

    capability: str
    """The capability (``forget``, ``beliefs``, ``inspect``, ``conflicts``, ``usage``, ``backlog``)."""
    probes: int
    """Probe results (both phases) recorded unsupported for want of it."""
    kpis: tuple[str, ...]
    """KPIs left null (unmeasured) for want of it."""


@dataclass(frozen=True)
class LatencyRow:
    """Percentiles of one timing label's samples, ms (None: no samples)."""

    n: int
    """Samples."""
    p50: float | None
    """Median."""
    p95: float | None
    """95th percentile."""
    p99: float | None
    """99th percentile."""
    max: float | None
    """Largest sample."""


@dataclass(frozen=True)
class ClusterInterval:
    """A KPI's cluster bootstrap 95% interval: whole clusters (scenarios: a LoCoMo conversation, a
    LongMemEval question) resampled, so probes sharing a haystack are not counted as independent."""

    unit: str
    """What a cluster is: the suite's ``cluster:`` (scenario, conversation, haystack, category, …)."""
    clusters: int
    """Clusters with at least one counted probe."""
    ci95: tuple[float, float] | None
    """The interval in the KPI's unit (None: fewer than two clusters; ``reason`` says so)."""
    reason: str | None
    """Why there is no interval (None when there is)."""
    seed: int
    """The resampling seed."""
    resamples: int
    """Bootstrap resamples drawn."""


@dataclass(frozen=True)
class Kpi:
    """One number a configuration is chosen on."""

    group: KpiGroup
    """The question it answers."""
    name: str
    """Its name within the group."""
    value: float | None
    """The value in ``unit``, rounded to 4 places (None: not measured)."""
    unit: Unit
    """Its unit."""
    better: Better | None
    """Which way is better (None: neither)."""
    n: NonNegative
    """Sample size."""
    ci95: tuple[float, float] | None
    """95% interval in ``unit`` (None: not a rate or mean, or too few samples)."""
    clustered: ClusterInterval | None = omitted(default=None)
    """The cluster bootstrap interval beside ``ci95`` (None: not read off probes, or not recorded: see ``RunRecord.migrated``)."""
    unsupported: str | None = omitted(default=None)
    """The capability the engine lacks that this KPI needs: the KPI does not exist for it (value None)."""


@dataclass(frozen=True)
class Stuffing:
    """The context-stuffing check: how much of their haystacks (the tokens written to the
    probe's tenant) the packs held; above ``threshold`` on average the run is not a retrieval test."""

    threshold: float
    """The share above which a run is flagged (the suite's ``stuffing_threshold``, default 0.5)."""
    probes: int
    """Scored probes with a pack and a haystack."""
    mean_share: float
    """Mean of pack tokens / haystack tokens."""
    max_share: float
    """The largest share."""
    over: int
    """Probes whose pack held more than ``threshold`` of their haystack."""
    flagged: bool
    """The mean share is above ``threshold``: not a retrieval test."""
    tokens_retrieved: float | None = omitted(default=None)
    """Mean pack tokens per counted probe: the depth measured (None: not recorded, see ``RunRecord.migrated``)."""
    tokens_stored: float | None = omitted(default=None)
    """Mean haystack tokens per counted probe (None: not recorded, see ``RunRecord.migrated``)."""
    items_retrieved: float | None = omitted(default=None)
    """Mean pack items per counted probe (None: no pack counted its items, or not recorded: see ``RunRecord.migrated``)."""
    items_stored: float | None = omitted(default=None)
    """Mean haystack items (documents, learnings, turns) per counted probe (None: not recorded, see ``RunRecord.migrated``)."""


@dataclass(frozen=True)
class SweepNote:
    """What a sweep cell adds: the matrix, the profile and repeat, and the drift guard."""

    matrix: str
    """The matrix name."""
    profile: str
    """The profile name."""
    repeat: int
    """The repeat number (1-based)."""
    intended_flags: dict[str, str]
    """The flags the profile sets."""
    flags_checked: bool
    """The server reported flags, so drift could be checked."""
    drift: tuple[str, ...]
    """One line per flag that differed."""


@dataclass(frozen=True)
class RepeatNote:
    """Which ``memeval run --repeat`` a run is one of: ``compare`` groups runs as repeats by ``group``."""

    group: str
    """The id the repeats share."""
    index: int
    """This run's repeat number (1-based)."""
    of: int
    """How many repeats were asked for."""


@dataclass(frozen=True)
class Shard:
    """The slice of the suite a ``--shard i/N`` run ran: the scenarios sorted by id, every
    ``count``-th starting at the ``index``-th (1-based)."""

    index: Positive
    """Which slice, 1 to ``count``."""
    count: Positive
    """How many slices the suite was cut into."""


@dataclass(frozen=True)
class RegradeNote:
    """What ``memeval regrade`` adds: the input and what was redone."""

    source: str = field(metadata={"key": "from"})
    """The run.json regraded."""
    at: str
    """When, UTC (RFC 3339, seconds)."""
    answered: bool
    """A model answered again."""
    judged: bool
    """A judge graded the model answers."""


@dataclass(frozen=True)
class RunRecord:
    """One run of a suite on one engine: run.json, the record of its resolved spec and hash, engine, options, every
    probe with its whole pack, timings, totals and KPIs."""

    format_version: Literal[2]
    """The run.json format (:data:`FORMAT_VERSION`)."""
    memeval_version: str
    """The memeval that wrote it."""
    label: str
    """The run's name (``--label``, else the engine's)."""
    profile: str | None
    """The sweep profile (None outside a sweep)."""
    flags: dict[str, str]
    """The engine's configuration flags."""
    run_id: str
    """Unique run id; engine namespaces carry it."""
    created_at: str
    """When the run started, UTC (RFC 3339, seconds)."""
    python: str
    """The Python version."""
    suite: SuiteInfo
    """The suite run."""
    engine: EngineSnapshot
    """The engine run on."""
    options: Options
    """The run options."""
    scenarios: tuple[ScenarioResult, ...]
    """Every scenario run, in suite order."""
    probes: tuple[ProbeResult, ...]
    """Every probe result, in run order."""
    answerer: Answerer | None
    """The model answerer (None without ``--llm``)."""
    usage: Usage | None
    """The engine's model usage over the run (None: unknown for some scenario, or none)."""
    timings: dict[TimingLabel, tuple[float, ...]]
    """Samples per timing label, ms, in order of first sample."""
    totals: dict[Phase, PhaseTotals] = field(default_factory=dict)
    """Totals per phase (derived)."""
    latency: dict[TimingLabel, LatencyRow] = field(default_factory=dict)
    """Percentiles per timing label (derived)."""
    kpis: tuple[Kpi, ...] = ()
    """Every KPI, in group order (derived)."""
    interrupted: bool = False
    """Ctrl-C stopped the run; it holds the scenarios finished before."""
    sweep: SweepNote | None = omitted(default=None)
    """The sweep cell it ran in (None outside a sweep)."""
    repeat: RepeatNote | None = omitted(default=None)
    """The ``--repeat`` group it is one run of (None: a run on its own)."""
    regrade: RegradeNote | None = omitted(default=None)
    """The regrade that produced it (None for a run)."""
    shard: Shard | None = omitted(default=None)
    """The slice it ran (None: the whole suite, or shards merged)."""
    benchmark: BenchmarkInfo | None = omitted(default=None)
    """The published benchmark file its questions came from (None: not a benchmark run)."""
    setup: Setup | None = omitted(default=None)
    """The scoring setup (derived; None: not recorded, see ``migrated``)."""
    stuffing: Stuffing | None = omitted(default=None)
    """The context-stuffing check (derived; None: no probe with a pack and a haystack, or not recorded: see ``migrated``)."""
    engine_unsupported: tuple[MissingCapability, ...] | None = omitted(default=None)
    """What the engine lacked that the run would have used (derived; None: not recorded, see ``migrated``)."""
    errata: ErrataRecord | None = omitted(default=None)
    """The suite's errata file and the disputed probes, scored apart (None: the suite declares none)."""
    migrated: Migrated | None = omitted(default=None)
    """How the record was upgraded from the older format its file was written in (None: written in this one)."""
    timing_scenarios: dict[TimingLabel, dict[str, int]] | None = omitted(default=None)
    """Per timing label, the samples each scenario gave, in ``timings`` order (None: an older record)."""

    def to_json(self) -> JsonObject:
        """run.json's content (key order included)."""
        out = codec.to_json(self)
        assert isinstance(out, dict)
        return out

    @classmethod
    def from_json(cls, data: Json, source: str = "run.json") -> "RunRecord":
        """A run record from run.json data.

        A file of an older format is upgraded first (:func:`memeval.record.migrate.upgrade`).

        Raises:
            RecordError: not a run record, a ``format_version`` this memeval cannot read (a newer
                one, or not a version), or a key or value that does not fit (one line, naming
                ``source`` and the path).
        """
        if not isinstance(data, dict) or "format_version" not in data:
            raise RecordError(f"{source}: not a memeval run.json (no format_version)")
        current = upgrade(dict(data), FORMAT_VERSION, source)
        try:
            return codec.from_json(cls, current)
        except RecordError as err:
            raise RecordError(f"{source}: {err}") from None

    def dumps(self) -> str:
        """run.json's text: two-space indented, non-ASCII kept, a final newline."""
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n"
