"""Synthetic run records for KPI and compare tests: only what the KPIs read, derived for real."""

from __future__ import annotations

from typing import Any

from memeval.run.suite import derive
from memeval.score.probe import base_record
from memeval.spec.model import Probe


def probe(pid: str, hit: bool | None = True, scenario: str = "s", phase: str = "synthesis",
          groups: tuple[str, ...] = (), expect: tuple[str, ...] = ("x",), **fields: Any) -> dict[str, Any]:
    """A scored probe record; ``hit`` also sets rr (1 or 0) and the extractive grade."""
    spec = Probe(id=pid, route="ask", agent="a", tenant="t", question=f"{pid}?", style="lexical", expect=expect,
                 groups=groups)
    record = base_record(scenario, spec, phase)
    record.update(status="scored", hit=hit, rr=None if hit is None else float(bool(hit)), answer_ok=hit, tokens=50,
                  ms=1.0, pack="# Memory")
    record.update(fields)
    return record


def hits(count: int, of: int, scenario: str = "s", phases: tuple[str, ...] = ("synthesis",)) -> list[dict[str, Any]]:
    """``of`` probes p00, p01, …, the first ``count`` of them hits, in each phase."""
    return [probe(f"p{i:02d}", i < count, scenario, phase) for phase in phases for i in range(of)]


def run(probes: list[dict[str, Any]], label: str = "run", profile: str | None = None, flags: dict[str, str] | None = None,
        scenarios: list[dict[str, Any]] | None = None, timings: dict[str, list[float]] | None = None,
        usage: dict[str, Any] | None = None, answerer: dict[str, Any] | None = None) -> dict[str, Any]:
    """A run record with totals and KPIs derived from ``probes`` by the real code."""
    record = {"format_version": 1, "label": label, "profile": profile, "flags": flags or {}, "probes": probes,
              "scenarios": scenarios or [], "timings": timings or {}, "usage": usage, "answerer": answerer}
    return derive(record)


def scenario(sid: str, conflicts: list[str] | None = None, built: int | None = None) -> dict[str, Any]:
    """A scenario record; ``conflicts`` (lines) makes its derived layers inspected."""
    synthesis: dict[str, Any] = {"built": built}
    if conflicts is not None:
        synthesis["derived"] = {"t": {"facts": [], "beliefs": [], "conflicts": conflicts, "stances": {}, "confidences": []}}
    return {"id": sid, "status": "ok", "synthesis": synthesis}


def value(record: dict[str, Any], name: str) -> Any:
    """The value of the KPI called ``name``."""
    return next(k["value"] for k in record["kpis"] if k["name"] == name)
