"""Running a whole suite against one engine and assembling the run record (run.json)."""

from __future__ import annotations

import platform
from datetime import datetime, timezone
from typing import Any, Callable

from memeval import __version__
from memeval.agent import Timings
from memeval.engines.base import Engine, ReportsUsage, Usage
from memeval.errors import EngineError, UsageError
from memeval.run.checkpoint import Journal, new_run_id
from memeval.run.options import RunOptions, check_only
from memeval.run.scenario import ScenarioRun
from memeval.score.kpi import compute_kpis
from memeval.score.totals import breakdown, latency
from memeval.spec.model import Scenario, Suite

FORMAT_VERSION = 1

Progress = Callable[[str], None]


def run_suite(suite: Suite, engine: Engine, options: RunOptions, progress: Progress = lambda _: None,
              journal: Journal | None = None) -> dict[str, Any]:
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
    entries, interrupted = [], False
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
    record = assemble(suite, info.to_json(), options, run_id, entries)
    record["interrupted"] = interrupted
    return record


def _run_one(suite: Suite, scenario: Scenario, engine: Engine, caps: frozenset[str], run_id: str,
             options: RunOptions, progress: Progress, journal: Journal | None) -> dict[str, Any]:
    before = _read_usage(engine, caps)
    progress(f"scenario {scenario.id}: running")
    timings = Timings()
    runner = ScenarioRun(suite, scenario, engine, caps, run_id, options, timings)
    if journal:
        journal.started(scenario.id, runner.state.namespaces)
    record = runner.run()
    after = _read_usage(engine, caps) if before is not None else None
    usage = _usage_json(after.minus(before)) if before is not None and after is not None else None
    entry = {"scenario": record, "probes": runner.probes, "timings": timings.samples, "usage": usage}
    if journal:
        journal.finished(entry)
    progress(_line(record, runner.probes))
    return entry


def assemble(suite: Suite, engine_info: dict[str, Any], options: RunOptions, run_id: str,
             entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The run record from per-scenario entries; totals, latency and KPIs come from :func:`derive`.
    ``profile`` is set by a sweep and ``answerer`` by ``--llm``, after the run."""
    scenarios = []
    for entry in entries:
        scenarios.append({**entry["scenario"], "usage": entry["usage"]})
    probes = [p for entry in entries for p in entry["probes"]]
    timings: dict[str, list[float]] = {}
    for entry in entries:
        for label, samples in entry["timings"].items():
            timings.setdefault(label, []).extend(samples)
    usage = _sum_usage([e["usage"] for e in entries])
    record = {
        "format_version": FORMAT_VERSION,
        "memeval_version": __version__,
        "label": options.label or engine_info["name"],
        "profile": None,
        "flags": dict(engine_info.get("flags", {})),
        "run_id": run_id,
        "created_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "python": platform.python_version(),
        "suite": {"name": suite.name, "about": suite.about, "source": suite.source, "files": list(suite.files),
                  "sha256": suite.sha256, "resolved": suite.resolved},
        "engine": engine_info,
        "options": _options_json(options),
        "scenarios": scenarios,
        "probes": probes,
        "answerer": None,
        "usage": usage,
        "timings": timings,
    }
    return derive(record)


def derive(record: dict[str, Any]) -> dict[str, Any]:
    """(Re)compute totals, latency and KPIs from the record's probes, scenarios, timings, usage
    and answerer; used after a run and after answers are added or re-graded."""
    record["totals"] = breakdown(record["probes"])
    record["latency"] = latency(record["timings"])
    record["kpis"] = compute_kpis(record["probes"], record["scenarios"], record["timings"], record["usage"],
                                  record["answerer"])
    return record


def _options_json(options: RunOptions) -> dict[str, Any]:
    return {"engine": options.engine, "only": list(options.only), "keep": options.keep,
            "enrich_wait_s": options.enrich_wait_s, "settle_timeout_s": options.settle_timeout_s, "llm": options.llm}


def _sum_usage(usages: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    parts = [u for u in usages if u is not None]
    if not parts or len(parts) < len(usages):  # no usage, or a scenario's is unknown: so is the total
        return None
    costs = [p["cost_usd"] for p in parts]
    roles: dict[str, float] = {}
    for part in parts:
        for role, cost in part["by_role"].items():
            roles[role] = round(roles.get(role, 0.0) + cost, 6)
    return {"calls": sum(p["calls"] for p in parts), "tokens": sum(p["tokens"] for p in parts),
            "cost_usd": None if None in costs else round(sum(costs), 6), "by_role": roles}


def _read_usage(engine: Engine, caps: frozenset[str]) -> Usage | None:
    """The engine's usage counters, or None when it has none or cannot tell now. A failing read
    is not the scenario's failure (that one is recorded by the scenario itself) and must not end
    the run: the scenario's usage is then unknown."""
    if "usage" not in caps or not isinstance(engine, ReportsUsage):
        return None
    try:
        return engine.usage()
    except EngineError:
        return None


def _usage_json(usage: Usage) -> dict[str, Any]:
    return {"calls": usage.calls, "tokens": usage.tokens, "cost_usd": usage.cost_usd, "by_role": dict(usage.by_role)}


def _line(record: dict[str, Any], probes: list[dict[str, Any]]) -> str:
    scored = [p for p in probes if p["status"] == "scored" and not p["abstain"]]
    hits = sum(1 for p in scored if p["hit"])
    status = "ok" if record["status"] == "ok" else f"ERROR: {record['error']}"
    return f"scenario {record['id']}: {hits}/{len(scored)} pack hits, {len(probes)} probe runs, {record['ms'] / 1000:.2f} s — {status}"
