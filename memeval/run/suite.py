"""Running a whole suite against one engine and assembling the run record (run.json)."""

from __future__ import annotations

import platform
import time
from datetime import datetime, timezone
from typing import Any, Callable

from memeval import __version__
from memeval.agent import Timings
from memeval.engines.base import Engine, Usage
from memeval.errors import UsageError
from memeval.run.options import RunOptions, check_only
from memeval.run.scenario import ScenarioRun
from memeval.score.kpi import compute_kpis
from memeval.score.totals import breakdown, latency
from memeval.spec.model import Suite

FORMAT_VERSION = 1

Progress = Callable[[str], None]


def run_suite(suite: Suite, engine: Engine, options: RunOptions, progress: Progress = lambda _: None) -> dict[str, Any]:
    """Run the chosen scenarios of ``suite`` on ``engine``; return the run record.

    Raises:
        UsageError: an option the engine cannot honour (e.g. isolated probe questions without forget).
    """
    check_only(suite, options.only)
    info = engine.info()
    caps = frozenset(info.capabilities)
    if suite.agent.probe_questions == "isolated" and "forget" not in caps:
        raise UsageError(f"agent.probe_questions: isolated needs an engine that can forget; {info.name} cannot")
    run_id = str(int(time.time()))
    timings = Timings()
    scenarios, probes = [], []
    usage_start = engine.usage() if "usage" in caps else None
    for scenario in suite.scenarios:
        if options.only and scenario.id not in options.only:
            continue
        before = engine.usage() if "usage" in caps else None
        progress(f"scenario {scenario.id}: running")
        runner = ScenarioRun(suite, scenario, engine, caps, run_id, options, timings)
        record = runner.run()
        if before is not None:
            record["usage"] = _usage_json(engine.usage().minus(before))
        scenarios.append(record)
        probes += runner.probes
        progress(_line(record, runner.probes))
    usage = _usage_json(engine.usage().minus(usage_start)) if usage_start is not None else None
    return assemble(suite, info.to_json(), options, run_id, scenarios, probes, timings.samples, usage)


def assemble(suite: Suite, engine_info: dict[str, Any], options: RunOptions, run_id: str,
             scenarios: list[dict[str, Any]], probes: list[dict[str, Any]], timings: dict[str, list[float]],
             usage: dict[str, Any] | None, answerer: dict[str, Any] | None = None) -> dict[str, Any]:
    """The run record from its parts; totals, latency and KPIs are derived by :func:`derive`."""
    record = {
        "format_version": FORMAT_VERSION,
        "memeval_version": __version__,
        "label": options.label or engine_info["name"],
        "profile": options.profile or None,
        "flags": dict(options.flags) or dict(engine_info.get("flags", {})),
        "run_id": run_id,
        "created_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "python": platform.python_version(),
        "suite": {"name": suite.name, "about": suite.about, "source": suite.source, "files": list(suite.files),
                  "sha256": suite.sha256, "resolved": suite.resolved},
        "engine": engine_info,
        "options": _options_json(options),
        "scenarios": scenarios,
        "probes": probes,
        "answerer": answerer,
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


def _usage_json(usage: Usage) -> dict[str, Any]:
    return {"calls": usage.calls, "tokens": usage.tokens, "cost_usd": usage.cost_usd, "by_role": dict(usage.by_role)}


def _line(record: dict[str, Any], probes: list[dict[str, Any]]) -> str:
    scored = [p for p in probes if p["status"] == "scored" and not p["abstain"]]
    hits = sum(1 for p in scored if p["hit"])
    status = "ok" if record["status"] == "ok" else f"ERROR: {record['error']}"
    return f"scenario {record['id']}: {hits}/{len(scored)} pack hits, {len(probes)} probe runs, {record['ms'] / 1000:.2f} s — {status}"
