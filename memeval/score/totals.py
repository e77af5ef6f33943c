"""Totals over probe records: per scenario and phase, overall, by style, and latency.

Every rate is a :class:`Rate` (k of n, Wilson interval); MRR is the mean reciprocal rank over
scored non-abstention probes (a miss counts 0). Only ``scored`` probes count; ``errored`` and
``unsupported`` probes are counted separately and never as misses.
"""

from __future__ import annotations

from typing import Any, Iterable

from memeval.score.stats import percentile, rate

PERCENTILES = (("p50", 0.5), ("p95", 0.95), ("p99", 0.99))


def totals(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Totals for a set of probe records (one phase, usually)."""
    records = list(records)
    scored = [r for r in records if r["status"] == "scored"]
    ranked = [r for r in scored if not r["abstain"]]
    rr = [r["rr"] for r in ranked if r["rr"] is not None]
    return {
        "probes": len(records),
        "scored": len(scored),
        "errored": sum(1 for r in records if r["status"] == "errored"),
        "unsupported": sum(1 for r in records if r["status"] == "unsupported"),
        "pack_hit": rate([r["hit"] for r in ranked]).to_json(),
        "mrr": {"value": round(sum(rr) / len(rr), 4) if rr else None, "n": len(rr)},
        "extractive": rate([r["answer_ok"] for r in scored]).to_json(),
        "model": rate([r["llm_ok"] for r in scored]).to_json(),
        "captured": rate([r["captured"] for r in scored]).to_json(),
        "fresh_first": rate([r["fresh_first"] for r in scored]).to_json(),
        "leaks": rate([r["leak"] for r in scored if r["leak_checked"]]).to_json(),
        "abstained": rate([not r["invented"] if r["invented"] is not None else None for r in scored]).to_json(),
        "pack_tokens": _mean([r["tokens"] for r in scored]),
    }


def breakdown(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals per phase: overall, per scenario, and per question style."""
    out: dict[str, Any] = {}
    for phase in sorted({r["phase"] for r in records}, key=["recall", "synthesis"].index):
        in_phase = [r for r in records if r["phase"] == phase]
        out[phase] = {
            "all": totals(in_phase),
            "scenarios": {s: totals(r for r in in_phase if r["scenario"] == s)
                          for s in dict.fromkeys(r["scenario"] for r in in_phase)},
            "styles": {s: totals(r for r in in_phase if r["style"] == s) for s in ("lexical", "paraphrase")},
        }
    return out


def latency(samples: dict[str, list[float]]) -> dict[str, dict[str, Any]]:
    """n, p50, p95, p99 and max (ms) per timing label; percentiles are null with no samples."""
    out = {}
    for label, values in samples.items():
        row: dict[str, Any] = {"n": len(values)}
        for name, q in PERCENTILES:
            row[name] = percentile(values, q)
        row["max"] = max(values) if values else None
        out[label] = row
    return out


def _mean(values: list[float | None]) -> dict[str, Any]:
    known = [v for v in values if v is not None]
    return {"value": round(sum(known) / len(known), 2) if known else None, "n": len(known)}
