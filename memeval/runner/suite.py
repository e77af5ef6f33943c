"""Running a whole suite against one engine and assembling the run record (run.json)."""

from __future__ import annotations

import dataclasses
import os
import platform
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from memeval import __version__
from memeval.agent.lifecycle import Timings
from memeval.engines.base import Engine, MemoryItem, RecallRequest, ReportsUsage
from memeval.engines.definition import EngineDef
from memeval.engines.server import engine_server
from memeval.engines.base import Usage as EngineUsage
from memeval.spec.units import suite_scenarios
from memeval.errors import EngineError, UsageError
from memeval.plan import Step as PlanStep
from memeval.record import FORMAT_VERSION, BenchmarkInfo, EngineSnapshot, Options, ProbeResult, RunRecord, ScenarioResult, Shard, \
    SuiteInfo, TimingLabel, Usage
from memeval.record.codec import from_json
from memeval.runner.checkpoint import FinishedThenInterrupted, Journal, ScenarioEntry, new_run_id, utc_now
from memeval.runner.executor import Executor, LocalExecutor, shard_slice
from memeval.runner.options import RunOptions, check_only
from memeval.runner.progress import Progress, ProgressEvent, silent, stage_events
from memeval.runner.scenario import ScenarioRun, namespace
from memeval.score.derive import derive
from memeval.score.errata import errata_record
from memeval.score.haystack import with_haystacks
from memeval.spec.model import Scenario, Suite


def run_suite(suite: Suite, engine: Engine, options: RunOptions, progress: Progress = silent,
              journal: Journal | None = None, executor: Executor | None = None, engine_def: EngineDef | None = None,
              shard: Shard | None = None) -> RunRecord:
    """Run the chosen scenarios of ``suite`` on ``engine``; return the run record.

    With a ``journal``, each finished scenario is appended to disk, scenarios it holds as
    finished ok are taken from it, and what a killed or errored scenario left in the engine is
    cleaned first. Ctrl-C stops
    after the current scenario's cleanup; the record then has ``interrupted: true`` and holds
    every scenario finished so far.

    The scenarios run on ``executor`` (default: here, one after another). A remote one runs each
    scenario as a :class:`ScenarioUnit` that builds its own engine from ``engine_def`` (which it
    then needs); this process still writes the journal. ``shard`` runs only its slice
    (:func:`~memeval.runner.executor.shard_slice` over the scenario ids).

    Raises:
        UsageError: an option the engine cannot honour (e.g. isolated probe questions without forget).
    """
    check_only(suite, options.only)
    info = engine.info()
    caps = frozenset(info.capabilities)
    if suite.agent.probe_questions == "isolated" and "forget" not in caps:
        raise UsageError(f"agent.probe_questions: isolated needs an engine that can forget; {info.name} cannot")
    if suite.policy.build_beliefs_every and "beliefs" not in caps:
        progress(ProgressEvent("note", f"policy.build_beliefs_every: unsupported on {info.name} (it cannot build beliefs); "
                               "post_turn schedules no builds"))
    run_id = journal.run_id if journal else new_run_id()
    for note in journal.clean_leftovers(engine, caps) if journal else []:
        progress(ProgressEvent("note", note))
    chosen = _chosen(suite.scenario_ids, options.only, shard)
    places = {sid: (i, len(chosen)) for i, sid in enumerate(chosen, 1)}
    entries: dict[str, ScenarioEntry] = {}
    eta = Eta(len(chosen))
    for sid in chosen:
        if journal and sid in journal.done:
            entries[sid] = journal.done[sid]
            progress(ProgressEvent("checkpoint", f"scenario {sid}: taken from the checkpoint", sid, *places[sid]))
            eta.skipped()
    # Units are built as they are reached (a dataset's are streamed from its file), never all at once.
    todo = (s for s in suite_scenarios(suite, tuple(options.only)) if s.id in places and s.id not in entries)
    progress = eta.tracking(progress)
    if executor is not None and not executor.remote:
        progress = serialised(progress)  # --jobs: scenarios report from several threads
    interrupted = False
    warm = warm_up(engine, caps, run_id, progress)
    try:
        if executor is not None and executor.remote:
            if engine_def is None:
                raise ValueError("a remote executor needs the engine definition")
            finished = _remote(suite, list(todo), engine_def, run_id, options, executor, progress, journal, places)
        else:
            finished = (executor or LocalExecutor()).map(
                lambda s: _run_one(suite, s, engine, caps, run_id, options, progress, places[s.id], journal),
                ((s.id, s) for s in todo))
        for sid, entry in finished:
            entries[sid] = entry
    except KeyboardInterrupt as stop:
        if isinstance(stop, FinishedThenInterrupted):
            entries[stop.entry.scenario.id] = stop.entry
        interrupted = True
        progress(ProgressEvent("note", "interrupted: writing what was finished"))
    ordered = [entries[sid] for sid in chosen if sid in entries]
    snapshot = from_json(EngineSnapshot, info.to_json(), "engine")
    created = str(journal.header["created_at"]) if journal and "created_at" in journal.header else None
    return assemble(suite, snapshot, options, run_id, ordered, interrupted, shard, warm, created)


def _chosen(ids: Sequence[str], only: tuple[str, ...], shard: Shard | None) -> list[str]:
    """The ids of the scenarios to run, in suite order: those ``--only`` names (all without it),
    cut to the shard."""
    chosen = [sid for sid in ids if not only or sid in only]
    if shard is None:
        return chosen
    keep = set(shard_slice(chosen, shard.index, shard.count))
    return [sid for sid in chosen if sid in keep]


@dataclass(frozen=True)
class ScenarioUnit:
    """One scenario as a remote executor ships it: the suite cut to that scenario, the engine
    definition (not an engine), the options and the run id its tenants are named with."""

    suite: Suite
    engine: EngineDef
    options: RunOptions
    run_id: str


def run_scenario_unit(unit: ScenarioUnit) -> ScenarioEntry:
    """Run the unit's scenario on an engine of its own (and its own server, when the definition
    has one); runs on a worker."""
    with tempfile.TemporaryDirectory(prefix="memeval-unit-") as tmp, \
            engine_server(unit.engine, os.path.join(tmp, "server.log")) as overrides:
        engine = unit.engine.create(overrides)
        try:
            caps = frozenset(engine.info().capabilities)
            return _run_one(unit.suite, unit.suite.scenarios[0], engine, caps, unit.run_id, unit.options,
                            silent, (1, 1), None)
        finally:
            engine.close()


def _remote(suite: Suite, todo: list[Scenario], engine_def: EngineDef, run_id: str, options: RunOptions,
            executor: Executor, progress: Progress, journal: Journal | None,
            places: dict[str, tuple[int, int]]) -> Iterator[tuple[str, ScenarioEntry]]:
    """Every scenario of ``todo`` on ``executor``; this process journals them as they come back."""
    units = [(s.id, ScenarioUnit(dataclasses.replace(suite, scenarios=(s,)), engine_def, options, run_id)) for s in todo]
    for scenario in todo:
        progress(ProgressEvent("running", f"scenario {scenario.id}: submitted", scenario.id, *places[scenario.id]))
        if journal:
            journal.started(scenario.id, {t: namespace(run_id, scenario.id, t) for t in scenario.tenants})
    for sid, entry in executor.map(run_scenario_unit, units):
        if journal:
            journal.finished(entry)
        progress(ProgressEvent("done", _line(entry.scenario, list(entry.probes)), sid, *places[sid]))
        yield sid, entry


def serialised(progress: Progress) -> Progress:
    """``progress`` called by one thread at a time (the display and the ETA count are not
    thread-safe)."""
    lock = threading.Lock()

    def one_at_a_time(event: ProgressEvent) -> None:
        with lock:
            progress(event)
    return one_at_a_time


class Eta:
    """Units done out of ``total`` and the time left, judged by the units run so far (those
    taken from a checkpoint cost nothing and are not counted in the pace)."""

    def __init__(self, total: int) -> None:
        self.total, self.finished, self.ran = total, 0, 0
        self.started = time.monotonic()

    def skipped(self) -> None:
        """One unit taken from the checkpoint."""
        self.finished += 1

    def tracking(self, progress: Progress) -> Progress:
        """``progress`` with each scenario's ``done`` event counted and its line ending in the
        units done and the time left."""
        def show(event: ProgressEvent) -> None:
            progress(dataclasses.replace(event, text=f"{event.text}; {self.done()}") if event.step == "done" else event)
        return show

    def done(self) -> str:
        """Count one unit run; the progress line to print."""
        self.finished += 1
        self.ran += 1
        elapsed = time.monotonic() - self.started
        left = max(self.total - self.finished, 0)
        return f"progress: {self.finished}/{self.total} units done, {elapsed:.0f} s elapsed, ETA {elapsed / self.ran * left:.0f} s"


def _benchmark(suite: Suite) -> BenchmarkInfo | None:
    """The run's benchmark record; the benchmark graders load only for a benchmark's suite
    (a ``dataset:`` source, or the ``x-dataset`` note of an imported one)."""
    if suite.dataset is None and "x-dataset" not in suite.resolved:
        return None
    from memeval.runner.benchmark import benchmark_info

    return benchmark_info(suite)


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
        try:
            engine.recall(RecallRequest(tenant=tenant, nodes=("warm-up",), query="what is there to remember?", limit=1))
        finally:  # what was written goes even when the recall failed
            if "forget" in caps:
                engine.forget(tenant, (item.id,))
    except EngineError as err:
        progress(ProgressEvent("note", f"warm-up failed: {err}"))
        return ()
    return (round(1000 * (time.perf_counter() - started), 3),)


def _run_one(suite: Suite, scenario: Scenario, engine: Engine, caps: frozenset[str], run_id: str,
             options: RunOptions, progress: Progress, place: tuple[int, int], journal: Journal | None) -> ScenarioEntry:
    before = _read_usage(engine, caps)
    progress(ProgressEvent("running", f"scenario {scenario.id}: running", scenario.id, *place))
    timings = Timings()
    runner = ScenarioRun(suite, scenario, engine, caps, run_id, options, timings)
    if journal:
        journal.started(scenario.id, runner.state.namespaces)
    events: list[ProgressEvent] = []  # the plan's stage events, made once it is known

    def on_step(steps: tuple[PlanStep, ...], at: int) -> None:
        if not events:
            events.extend(stage_events(scenario.id, place, steps))
        progress(events[at])

    result = runner.run(on_step)
    after = _read_usage(engine, caps) if before is not None else None
    usage = _usage(after.minus(before)) if before is not None and after is not None else None
    entry = ScenarioEntry(dataclasses.replace(result, usage=usage), with_haystacks(scenario, runner.probes),
                          timings.frozen())
    if journal:
        journal.finished(entry)
    progress(ProgressEvent("done", _line(result, runner.probes), scenario.id, *place))
    if runner.interrupted:
        raise FinishedThenInterrupted(entry)
    return entry


def assemble(suite: Suite, engine: EngineSnapshot, options: RunOptions, run_id: str, entries: Sequence[ScenarioEntry],
             interrupted: bool = False, shard: Shard | None = None, warm: tuple[float, ...] = (),
             created_at: str | None = None) -> RunRecord:
    """The run record from per-scenario entries and the warm-up's ms (``warm``, timed apart
    from every KPI); ``created_at`` is when the run began (its journal's, kept by a resume), else
    now; totals, latency and KPIs come from :func:`~memeval.score.derive.derive`.
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
        created_at=created_at or utc_now(),
        python=platform.python_version(),
        suite=SuiteInfo(suite.name, suite.about, suite.source, tuple(suite.files), suite.sha256, suite.resolved),
        engine=engine,
        options=Options(options.engine, tuple(options.only), options.keep, options.enrich_wait_s,
                        options.settle_timeout_s, options.llm, options.jobs),
        scenarios=tuple(e.scenario for e in entries),
        probes=tuple(p for e in entries for p in e.probes),
        answerer=None,
        usage=sum_usage([e.scenario.usage for e in entries]),
        timings={label: tuple(samples) for label, samples in timings.items()},
        interrupted=interrupted,
        shard=shard,
        benchmark=_benchmark(suite),
        errata=errata_record(suite),
        timing_scenarios=timing_scenarios(entries),
    )
    return derive(record)


def timing_scenarios(entries: Sequence[ScenarioEntry]) -> dict[TimingLabel, dict[str, int]]:
    """Per timing label, the samples each scenario gave, in the order :func:`assemble` joins them."""
    out: dict[TimingLabel, dict[str, int]] = {}
    for entry in entries:
        for label, samples in entry.timings.items():
            out.setdefault(label, {})[entry.scenario.id] = len(samples)
    return out


def sum_usage(usages: list[Usage | None]) -> Usage | None:
    """The run's usage from its scenarios'; None when any is unknown or there is none."""
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
    scored = [p for p in probes if p.scored and p.hit is not None]  # abstention, judged, leak-only: no pack hit
    hits = sum(1 for p in scored if p.hit)
    status = "ok" if result.ok else f"ERROR: {result.error}"
    return f"scenario {result.id}: {hits}/{len(scored)} pack hits, {len(probes)} probe runs, {result.ms / 1000:.2f} s — {status}"
