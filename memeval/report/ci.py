"""What ``memeval run`` hands to CI besides the report: the JUnit file and ``--format json``'s
machine-readable summary (printed on stdout, one JSON object)."""

from __future__ import annotations

from collections import Counter

from memeval.record import JsonObject, RunRecord
from memeval.report.gates import Verdict, slug
from memeval.report.html_view import outcomes


def json_summary(record: RunRecord, folder: str, outcome: str, verdicts: list[Verdict]) -> JsonObject:
    """The run in brief: where it is, how it ended, its probe tally, every KPI by gate key
    (value null when not measured) and every gate's verdict."""
    tally = Counter("passed" if p.status == "scored" and not outcomes(p) else
                    "failed" if p.status == "scored" else p.status for p in record.probes)
    return {
        "folder": folder, "run_id": record.run_id, "label": record.label, "suite": record.suite.name,
        "engine": record.engine.name, "outcome": outcome, "interrupted": record.interrupted,
        "probes": {"total": len(record.probes), **{k: tally.get(k, 0) for k in ("passed", "failed", "errored",
                                                                                  "unsupported")}},
        "kpis": {slug(k.name): {"name": k.name, "group": k.group, "value": k.value, "unit": k.unit, "n": k.n}
                 for k in record.kpis},
        "gates": [{"kpi": v.gate.kpi, "condition": v.gate.written, "source": v.gate.source, "passed": v.passed,
                   "line": v.line} for v in verdicts],
    }
