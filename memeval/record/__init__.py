"""The run record: run.json as frozen, typed values, and its one JSON edge.

Every stage is a function of the record: running produces a :class:`RunRecord`, scoring
derives its totals, latency and KPIs, ``--llm`` answering, judging, regrading and a sweep's
annotations each return a new one (:func:`dataclasses.replace`), and compare and the reports
read its typed fields. :meth:`RunRecord.to_json` and :meth:`RunRecord.from_json` round-trip
run.json exactly (same keys, order and values).
"""

from memeval.record.answerer import (Agreement, Answerer, CacheInfo, Consistency, Count, Incurred, JudgeSummary,
                                     Leniency, ModelSide, Planted, Prompt, Sampling)
from memeval.record.benchmark import BenchmarkInfo, BenchmarkJudge, GraderRecord, JudgeSampling, TemplateUsed
from memeval.record.codec import Json, JsonObject, RecordError
from memeval.record.errata import Disputed, ErrataRecord, ErrataResult
from memeval.record.migrate import Migrated
from memeval.record.probe import AnswerCall, JudgeMark, ProbeResult
from memeval.record.run import (FORMAT_VERSION, ClusterInterval, EngineSnapshot, Kpi, LatencyRow, MeanValue,
                                MissingCapability, Options, PhaseTotals, RateValue, RegradeNote, RepeatNote, RunRecord,
                                Shard,
                                Stuffing, SuiteInfo, SweepNote, Totals)
from memeval.record.setup import DatasetSetup, EngineSetup, GraderJudgeSetup, GradingSetup, ModelSetup, PackSetup, Setup
from memeval.record.scenario import Builds, Cleanup, Enrichment, ScenarioResult, Synthesis, TenantDerived, Usage
from memeval.record.values import (KPI_GROUPS, PHASES, STYLES, Better, KpiGroup, Match, Phase, ProbeStatus, Route,
                                   ScenarioStatus, Style, TimingLabel, Unit)

__all__ = [
    "FORMAT_VERSION", "KPI_GROUPS", "PHASES", "STYLES", "Agreement", "AnswerCall", "Answerer", "BenchmarkInfo", "BenchmarkJudge", "Consistency",
    "JudgeSampling", "TemplateUsed",
    "Better", "Builds", "GraderRecord", "Disputed", "ErrataRecord", "ErrataResult",
    "CacheInfo", "Cleanup", "ClusterInterval", "Count", "DatasetSetup", "EngineSetup", "EngineSnapshot", "GraderJudgeSetup", "GradingSetup",
    "ModelSetup", "PackSetup", "Setup", "Enrichment", "Incurred", "Json", "JsonObject", "JudgeMark",
    "JudgeSummary", "Kpi", "KpiGroup", "LatencyRow", "Leniency", "Match", "MeanValue", "Migrated", "MissingCapability", "ModelSide", "Options", "Phase",
    "PhaseTotals", "Planted", "ProbeResult", "ProbeStatus", "Prompt", "RateValue", "RecordError", "RegradeNote", "RepeatNote",
    "Route", "RunRecord", "Sampling", "ScenarioResult", "ScenarioStatus", "Shard", "Stuffing", "Style", "SuiteInfo",
    "SweepNote",
    "Synthesis", "TenantDerived", "TimingLabel", "Totals", "Unit", "Usage",
]
