"""Running a whole suite against one engine and assembling the run record (run.json)."""

from __future__ import annotations

import dataclasses
import platform
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone

from memeval import __version__
from memeval.agent import Timings
from memeval.engines.base import Engine, MemoryItem, RecallRequest, ReportsUsage
from memeval.engines.base import Usage as EngineUsage
from memeval.errors import EngineError, UsageError
from memeval.record import FORMAT_VERSION, EngineSnapshot, Options, ProbeResult, RunRecord, ScenarioResult, SuiteInfo, \
    TimingLabel, Usage
from memeval.record.codec import from_json
from memeval.run.checkpoint import Journal, ScenarioEntry, new_run_id
from memeval.run.options import RunOptions, check_only
from memeval.run.scenario import ScenarioRun
from memeval.score.derive import derive
from memeval.spec.model import Scenario, Suite

Progress = Callable[[str], None]


def run_suite(suite: Suite, engine: Engine, options: RunOptions, progress: Progress = lambda _: None,
              journal: Journal | None = None) -> RunRecord:
    """Run the chosen scenarios of ``suite`` on ``engine``; return the run record.

    With a ``journal``, each finished scenario is appended to disk, scenarios it holds as
    finished ok are taken from it, and what a killed or errored scenario left in the engine is
    cleaned first. Ctrl-C stops
    after the current scenario's cleanup; the record then has ``interrupted: true`` and holds
    every scenario finished so far.

    Raises:
        UsageError: an option the engine cannot honour (e.g. isolated probe questions without forget).
    """
    check_only(suite, options.only)
    info = engine.info()
    caps = frozenset(info.capabilities)
    if suite.agent.probe_questions == "isolated" and "forget" not in caps:
        raise UsageError(f"agent.probe_questions: isolated needs an engine that can forget; {info.name} cannot")
    run_id = journal.run_id if journal else new_run_id()
    for note in journal.clean_leftovers(engine, caps) if journal else []:
        progress(note)
    entries: list[ScenarioEntry] = []
    interrupted = False
    warm = warm_up(engine, caps, run_id, progress)
    try:
        for scenario in suite.scenarios:
            if options.only and scenario.id not in options.only:
                continue
            if journal and scenario.id in journal.done:
                entries.append(journal.done[scenario.id])
                progress(f"scenario {scenario.id}: taken from the checkpoint")
                continue
            entries.append(_run_one(suite, scenario, engine, caps, run_id, options, progress, journal))
    except KeyboardInterrupt:
        interrupted = True
        progress("interrupted: writing what was finished")
    return assemble(suite, from_json(EngineSnapshot, info.to_json(), "engine"), options, run_id, entries, interrupted,
                    warm)


def warm_up(engine: Engine, caps: frozenset[str], run_id: str, progress: Progress) -> tuple[float, ...]:
    """One write, one recall and (when the engine can) one forget in a tenant of the run's own,
    before the first scenario, so that what an engine does once (loading an embedding model, opening a
    connection) is timed as warm-up, not as the first probe's latency. Returns the warm-up's ms,
    or nothing when a call failed (the reason goes to ``progress``; the scenarios then meet the
    failure themselves)."""
    tenant = f"{run_id}-warm-up"
    item = MemoryItem(tenant=tenant, node="warm-up", kind="document", text="memeval warm-up: nothing to remember.")
    started = time.perf_counter()
    try:
        engine.write(item)
        engine.recall(RecallRequest(tenant=tenant, nodes=("warm-up",), query="what is there to remember?", limit=1))
        if "forget" in caps:
            engine.forget(tenant, (item.id,))
    except EngineError as err:
        progress(f"warm-up failed: {err}")
        return ()
    return (round(1000 * (time.perf_counter() - started), 3),)


def _run_one(suite: Suite, scenario: Scenario, engine: Engine, caps: frozenset[str], run_id: str,
             options: RunOptions, progress: Progress, journal: Journal | None) -> ScenarioEntry:
    before = _read_usage(engine, caps)
    progress(f"scenario {scenario.id}: running")
    timings = Timings()
    runner = ScenarioRun(suite, scenario, engine, caps, run_id, options, timings)
    if journal:
        journal.started(scenario.id, runner.state.namespaces)
    result = runner.run()
    after = _read_usage(engine, caps) if before is not None else None
    usage = _usage(after.minus(before)) if before is not None and after is not None else None
    entry = ScenarioEntry(dataclasses.replace(result, usage=usage), tuple(runner.probes), timings.frozen())
    if journal:
        journal.finished(entry)
    progress(_line(result, runner.probes))
    return entry


def assemble(suite: Suite, engine: EngineSnapshot, options: RunOptions, run_id: str, entries: Sequence[ScenarioEntry],
             interrupted: bool = False, warm: tuple[float, ...] = ()) -> RunRecord:
    """The run record from per-scenario entries and the warm-up's ms (``warm``, timed apart
    from every KPI); totals, latency and KPIs come from :func:`~memeval.score.derive.derive`.
    ``profile`` is set by a sweep and ``answerer`` by ``--llm``, after the run."""
    timings: dict[TimingLabel, list[float]] = {TimingLabel.WARMUP: list(warm)} if warm else {}
    for entry in entries:
        for label, samples in entry.timings.items():
            timings.setdefault(label, []).extend(samples)
    record = RunRecord(
        format_version=FORMAT_VERSION,
        memeval_version=__version__,
        label=options.label or engine.name,
        profile=None,
        flags=dict(engine.flags),
        run_id=run_id,
        created_at=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        python=platform.python_version(),
        suite=SuiteInfo(suite.name, suite.about, suite.source, tuple(suite.files), suite.sha256, suite.resolved),
        engine=engine,
        options=Options(options.engine, tuple(options.only), options.keep, options.enrich_wait_s,
                        options.settle_timeout_s, options.llm),
        scenarios=tuple(e.scenario for e in entries),
        probes=tuple(p for e in entries for p in e.probes),
        answerer=None,
        usage=_sum_usage([e.scenario.usage for e in entries]),
        timings={label: tuple(samples) for label, samples in timings.items()},
        interrupted=interrupted,
    )
    return derive(record)


def _sum_usage(usages: list[Usage | None]) -> Usage | None:
    parts = [u for u in usages if u is not None]
    if not parts or len(parts) < len(usages):  # no usage, or a scenario's is unknown: so is the total
        return None
    costs = [p.cost_usd for p in parts]
    roles: dict[str, float] = {}
    for part in parts:
        for role, cost in part.by_role.items():
            roles[role] = round(roles.get(role, 0.0) + cost, 6)
    total = None if None in costs else round(sum(c for c in costs if c is not None), 6)
    return Usage(sum(p.calls for p in parts), sum(p.tokens for p in parts), total, roles)


def _read_usage(engine: Engine, caps: frozenset[str]) -> EngineUsage | None:
    """The engine's usage counters, or None when it has none or cannot tell now. A failing read
    is not the scenario's failure (that one is recorded by the scenario itself) and must not end
    the run: the scenario's usage is then unknown."""
    if "usage" not in caps or not isinstance(engine, ReportsUsage):
        return None
    try:
        return engine.usage()
    except EngineError:
        return None


def _usage(usage: EngineUsage) -> Usage:
    return Usage(usage.calls, usage.tokens, usage.cost_usd, dict(usage.by_role))


def _line(result: ScenarioResult, probes: list[ProbeResult]) -> str:
    scored = [p for p in probes if p.scored and not p.abstain]
    hits = sum(1 for p in scored if p.hit)
    status = "ok" if result.ok else f"ERROR: {result.error}"
    return f"scenario {result.id}: {hits}/{len(scored)} pack hits, {len(probes)} probe runs, {result.ms / 1000:.2f} s — {status}"
