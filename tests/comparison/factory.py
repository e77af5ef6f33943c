"""Synthetic run records for KPI and compare tests: only what the KPIs read, derived for real."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from memeval.record import (Answerer, Builds, CacheInfo, Cleanup, EngineSnapshot, Incurred, Options, Prompt,
                            ProbeResult, RunRecord, Sampling, ScenarioResult, SuiteInfo, Synthesis, TenantDerived,
                            TimingLabel, Usage)
from memeval.score.derive import derive
from memeval.score.unsupported import USED
from memeval.score.probe import blank_result
from memeval.spec.model import Probe


def probe(pid: str, hit: bool | None = True, scenario: str = "s", phase: str = "synthesis",
          groups: tuple[str, ...] = (), expect: tuple[str, ...] = ("x",), **fields: Any) -> ProbeResult:
    """A scored probe result; ``hit`` also sets rr (1 or 0) and the extractive grade."""
    spec = Probe(id=pid, route="ask", agent="a", tenant="t", question=f"{pid}?", style="lexical", expect=expect,
                 groups=groups)
    result = blank_result(scenario, spec, phase, "scored", None)  # type: ignore[arg-type]
    return replace(result, hit=hit, rr=None if hit is None else float(bool(hit)),
                   answer_ok=hit, tokens=50, ms=1.0, pack="# Memory", **fields)


def hits(count: int, of: int, scenario: str = "s", phases: tuple[str, ...] = ("synthesis",)) -> list[ProbeResult]:
    """``of`` probes p00, p01, …, the first ``count`` of them hits, in each phase."""
    return [probe(f"p{i:02d}", i < count, scenario, phase) for phase in phases for i in range(of)]


def answerer(calls: int, tokens: int | None, cost_usd: float | None) -> Answerer:
    """An answerer that gave ``calls`` answers costing ``tokens`` and ``cost_usd``."""
    return Answerer(endpoint="http://127.0.0.1:1/v1", model="m", prompt=Prompt("answer-v1", "0" * 64),
                    sampling=Sampling(0.0, 120), concurrency=1, timeout_s=1.0, retries=0,
                    cache=CacheInfo(False, None, 0, 0), incurred=Incurred(calls, calls, 0, None, None, tokens, cost_usd),
                    probes=calls, answered=calls, failed=0, not_answered=0, calls=calls, prompt_tokens=None,
                    completion_tokens=None, tokens=tokens, cost_usd=cost_usd, stopped=None, judge=None)


def run(probes: list[ProbeResult], label: str = "run", profile: str | None = None, flags: dict[str, str] | None = None,
        scenarios: list[ScenarioResult] | None = None, timings: dict[str, list[float]] | None = None,
        usage: Usage | None = None, answers: Answerer | None = None,
        capabilities: tuple[str, ...] = tuple(sorted(USED))) -> RunRecord:
    """A run record with totals and KPIs derived from ``probes`` by the real code (an engine
    with every capability unless ``capabilities`` says otherwise)."""
    record = RunRecord(
        format_version=2, memeval_version="0", label=label, profile=profile, flags=flags or {}, run_id="r",
        created_at="2026-01-01T00:00:00Z", python="3.11",
        suite=SuiteInfo("s", "", "s.yaml", (), "0" * 64, {}),
        engine=EngineSnapshot("e", "0", capabilities, None, (), dict(flags or {}), {}),
        options=Options("e", (), False, None, None, answers is not None, 1),
        scenarios=tuple(scenarios or ()), probes=tuple(probes), answerer=answers, usage=usage,
        timings={TimingLabel(k): tuple(v) for k, v in (timings or {}).items()})
    return derive(record)


def scenario(sid: str, conflicts: list[str] | None = None, built: int | None = None) -> ScenarioResult:
    """A scenario result; ``conflicts`` (lines) makes its derived layers inspected."""
    derived = None if conflicts is None else {"t": TenantDerived((), (), tuple(conflicts), {}, ())}
    return ScenarioResult(sid, "", "ok", None, {}, 0, 0, Synthesis(builds=Builds({}, built, 0.0), derived=derived),
                          Cleanup(True, None), 0.0)


def value(record: RunRecord, name: str) -> Any:
    """The value of the KPI called ``name``."""
    return next(k.value for k in record.kpis if k.name == name)
