"""Joining the run records of ``--shard i/N`` runs into the record of the whole run.

Shards join only when they ran the same suite (sha256) on the same setup (engine name, version
and flags, run options) and are exactly the slices 1..N of one N, each once. The merged record
holds the scenarios in suite order, each scenario's probes in that order, the timing samples
shard by shard, and the totals, latency and KPIs derived again from them; it has no ``shard``
and a new run id.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from memeval.errors import UsageError
from memeval.record import RunRecord, TimingLabel
from memeval.report.files import read_run
from memeval.report.publish import publish
from memeval.runner.checkpoint import new_run_id
from memeval.runner.output import run_folder
from memeval.runner.suite import sum_usage
from memeval.score.derive import derive

Shards = Sequence[tuple[str, RunRecord]]
"""Each shard's record with where it was read from (named in errors)."""

_SETUP: tuple[tuple[str, Any], ...] = (
    ("suite.sha256", lambda r: r.suite.sha256),
    ("engine.name", lambda r: r.engine.name),
    ("engine.version", lambda r: r.engine.version),
    ("flags", lambda r: r.flags),
    ("options", lambda r: r.options),
    ("profile", lambda r: r.profile),
)


def merge_shards(shards: Shards) -> RunRecord:
    """The whole run's record from its shards (see the module docstring).

    Raises:
        UsageError: fewer than two records, a record that is not a shard, shards of different
            suites or setups (naming the field), or slices overlapping or missing.
    """
    if len(shards) < 2:
        raise UsageError("merge: give the folders of two or more --shard runs")
    _check_setup(shards)
    _check_slices(shards)
    first = shards[0][1]
    order = {sid: n for n, sid in enumerate(_suite_order(first))}
    records = sorted((r for _, r in shards), key=lambda r: r.shard.index if r.shard else 0)
    scenarios = sorted((s for r in records for s in r.scenarios), key=lambda s: order.get(s.id, len(order)))
    rank = {s.id: n for n, s in enumerate(scenarios)}
    probes = sorted((p for r in records for p in r.probes), key=lambda p: rank.get(p.scenario, len(rank)))
    timings: dict[TimingLabel, list[float]] = {}
    counts: dict[TimingLabel, dict[str, int]] | None = {}
    for record in records:
        for label, samples in record.timings.items():
            timings.setdefault(label, []).extend(samples)
        if record.timing_scenarios is None or counts is None:
            counts = None  # one shard that does not say which scenario timed what: none does
        else:
            for label, by_scenario in record.timing_scenarios.items():
                counts.setdefault(label, {}).update(by_scenario)
    merged = dataclasses.replace(
        first, run_id=new_run_id(), created_at=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        scenarios=tuple(scenarios), probes=tuple(probes), usage=sum_usage([s.usage for s in scenarios]),
        timings={label: tuple(samples) for label, samples in timings.items()},
        interrupted=any(r.interrupted for r in records), shard=None, timing_scenarios=counts)
    return derive(merged)


def _check_setup(shards: Shards) -> None:
    source, first = shards[0]
    for where, record in shards[1:]:
        for name, get in _SETUP:
            if get(record) != get(first):
                raise UsageError(f"merge: {where} has another {name} than {source} ({get(record)!r} vs "
                                 f"{get(first)!r}); shards must come from one suite and setup")
        if record.answerer is not None or first.answerer is not None:
            raise UsageError(f"merge: {where if record.answerer else source} was answered by a model (--llm); "
                             "merge the engine runs, then regrade the merged run")


def _check_slices(shards: Shards) -> None:
    counts = {r.shard.count for _, r in shards if r.shard is not None}
    for where, record in shards:
        if record.shard is None:
            raise UsageError(f"merge: {where} is not a --shard run (run.json has no shard)")
    if len(counts) > 1:
        raise UsageError(f"merge: shard.count differs between the shards ({', '.join(map(str, sorted(counts)))})")
    count = counts.pop()
    seen: dict[int, str] = {}
    for where, record in shards:
        assert record.shard is not None
        if record.shard.index in seen:
            raise UsageError(f"merge: shard.index {record.shard.index}/{count} twice ({seen[record.shard.index]} "
                             f"and {where})")
        seen[record.shard.index] = where
    missing = [str(i) for i in range(1, count + 1) if i not in seen]
    if missing:
        raise UsageError(f"merge: shard.index {', '.join(missing)} of {count} missing; give every shard's folder")
    ids: dict[str, str] = {}
    for where, record in shards:
        for scenario in record.scenarios:
            if scenario.id in ids:
                raise UsageError(f"merge: scenario {scenario.id} is in {ids[scenario.id]} and {where}")
            ids[scenario.id] = where


def _suite_order(record: RunRecord) -> list[str]:
    """Scenario ids in suite order, from the resolved spec the record keeps."""
    scenarios = record.suite.resolved.get("scenarios")
    if not isinstance(scenarios, list):
        return []
    return [str(s.get("scenario")) for s in scenarios if isinstance(s, dict)]


def merge_folders(folders: Sequence[str], out: str | None, force: bool, templates: str | None = None) -> tuple[str, str]:
    """Merge the runs in ``folders`` (each a run folder or its run.json) and publish the result to
    ``out`` (default ``runs/<label>/<new run id>/``); returns the folder and the Markdown report."""
    shards = [(path, read_run(path if path.endswith(".json") else os.path.join(path, "run.json"))) for path in folders]
    merged = merge_shards(shards)
    folder = run_folder(merged.label, merged.run_id, out, force)
    return folder, publish(merged, folder, templates)
