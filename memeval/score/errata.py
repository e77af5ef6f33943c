"""Disputed gold, scored apart: the suite's errata file applied to a run record.

:func:`errata_record` turns the suite's resolved errata (:mod:`memeval.spec.errata`) into the
record run.json keeps. :func:`apply_errata` marks every probe whose gold is disputed
(``disputed``: no KPI, total or paired test counts it, see
:meth:`memeval.score.kpi.ProbeMetric.outcomes`) and computes, for each headline rate of
:data:`HEADLINE`, its result over the disputed probes and the ceiling they impose:
(n − disputed) / n, the best accuracy a system can reach if every disputed gold is unattainable
(:func:`memeval.stats.clustered.errata_ceiling`). It is a pure function of the record, so
answering or regrading re-derives it.
"""

from __future__ import annotations

import os
from dataclasses import replace

from memeval.record import Disputed, ErrataRecord, ErrataResult, ProbeResult, RunRecord
from memeval.stats.clustered import errata_ceiling
from memeval.score.kpi import HEADLINE, METRICS_BY_NAME
from memeval.spec.model import Suite


def errata_record(suite: Suite) -> ErrataRecord | None:
    """What run.json records of ``suite``'s errata file (None: it declares none)."""
    errata = suite.errata
    if errata is None:
        return None
    disputed = tuple(Disputed(scenario, probe, e.id, e.source, e.reason) for scenario, probe, e in errata.disputed)
    return ErrataRecord(os.path.basename(errata.file), errata.sha256, errata.covers, len(errata.entries), disputed,
                        len(errata.unselected), tuple(e.id for e in errata.unknown))


def apply_errata(record: RunRecord) -> RunRecord:
    """``record`` with its disputed probes marked and the errata results computed; unchanged
    when the suite declares no errata file."""
    errata = record.errata
    if errata is None:
        return record
    keys = {(d.scenario, d.probe) for d in errata.disputed}
    # every probe unmarked (a re-derived record carries its earlier marks), so the headline
    # outcomes below include the disputed ones and errata_ceiling sets them apart
    unmarked = tuple(replace(p, disputed=None) for p in record.probes)
    disputed = {p.key for p in unmarked if (p.scenario, p.id) in keys}
    results = tuple(_result(name, unmarked, disputed) for name in HEADLINE)
    probes = tuple(replace(p, disputed=True) if p.key in disputed else p for p in unmarked)
    return replace(record, probes=probes, errata=replace(errata, results=tuple(r for r in results if r.n)))


def _result(name: str, probes: tuple[ProbeResult, ...], disputed: set[tuple[str, str, str]]) -> ErrataResult:
    outcomes = METRICS_BY_NAME[("accuracy", name)].outcomes(probes)
    split = errata_ceiling({key: bool(v) for key, v in outcomes.items()}, disputed)
    ceiling = split.ceiling.value
    return ErrataResult(name, split.all.n, split.disputed.n, split.clean.k, split.disputed.k,
                        None if ceiling is None else round(ceiling, 4))
