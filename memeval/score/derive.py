"""What scoring derives from a run record: totals, latency and KPIs, recomputed whenever the
probes, scenarios, timings, usage or answerer change (after a run, answering, regrading)."""

from __future__ import annotations

from dataclasses import replace

from memeval.record import RunRecord
from memeval.score.clusters import clustering
from memeval.score.errata import apply_errata
from memeval.score.haystack import stuffing
from memeval.score.kpi import compute_kpis
from memeval.score.setup import scoring_setup
from memeval.score.totals import breakdown, latency
from memeval.score.unsupported import engine_unsupported, mark_unsupported


def derive(record: RunRecord) -> RunRecord:
    """``record`` with its disputed probes marked (:mod:`memeval.score.errata`), its totals,
    latency, KPIs (disputed probes left out of both; those of a capability the engine lacks
    unsupported), scoring setup, stuffing check and what the engine lacked computed from the rest
    (so a record upgraded from an older format no longer notes them absent)."""
    record = apply_errata(record)
    kpis = mark_unsupported(compute_kpis(record.probes, record.scenarios, record.timings, record.usage, record.answerer,
                                         clustering(record.suite.resolved)), record.engine.capabilities)
    migrated = record.migrated and record.migrated.measured("setup", "stuffing", "engine_unsupported", "kpis")
    return replace(record, totals=breakdown([p for p in record.probes if not p.disputed]), latency=latency(record.timings), kpis=kpis,
                   setup=scoring_setup(record), stuffing=stuffing(record.probes, record.suite.resolved),
                   engine_unsupported=engine_unsupported(record.engine.capabilities, record.probes, kpis),
                   migrated=migrated)
