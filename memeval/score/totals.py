"""Totals over probe results: per scenario and phase, overall, by style, and latency.

Every rate is a :class:`Rate` (k of n, Wilson interval); MRR is the mean reciprocal rank over
scored non-abstention probes (a miss counts 0). Only ``scored`` probes count; ``errored`` and
``unsupported`` probes are counted separately and never as misses.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from memeval.record import PHASES, STYLES, LatencyRow, MeanValue, Phase, PhaseTotals, ProbeResult, RateValue, \
    TimingLabel, Totals
from memeval.stats.basic import Rate, percentile, rate

PERCENTILES = (("p50", 0.5), ("p95", 0.95), ("p99", 0.99))


def totals(results: Iterable[ProbeResult]) -> Totals:
    """Totals for a set of probe results (one phase, usually)."""
    results = list(results)
    scored = [r for r in results if r.scored]
    ranked = [r for r in scored if not r.abstain]
    rr = [r.rr for r in ranked if r.rr is not None]
    return Totals(
        probes=len(results),
        scored=len(scored),
        errored=sum(1 for r in results if r.status == "errored"),
        unsupported=sum(1 for r in results if r.status == "unsupported"),
        pack_hit=rate_value(rate([r.hit for r in ranked])),
        mrr=MeanValue(round(sum(rr) / len(rr), 4) if rr else None, len(rr)),
        extractive=rate_value(rate([r.answer_ok for r in scored])),
        model=rate_value(rate([r.llm_ok for r in scored])),
        captured=rate_value(rate([r.captured for r in scored])),
        fresh_first=rate_value(rate([r.fresh_first for r in scored])),
        leaks=rate_value(rate([r.leak for r in scored if r.leak_checked])),
        abstained=rate_value(rate([invents_nothing(r) for r in scored])),
        pack_tokens=_mean([r.tokens for r in scored]),
    )


def invents_nothing(p: ProbeResult) -> bool | None:
    """The one definition of "the pack invents nothing": for a probe feeding the ``abstention``
    group whose invention was checked, whether its pack holds none of its ``forbid`` strings;
    None for every other probe. The totals' column and the KPI of that name both read this."""
    return None if "abstention" not in p.groups or p.invented is None else not p.invented


def measured_percentile(samples: Sequence[float], q: float) -> float | None:
    """The ``q`` percentile of ``samples``, or None below ceil(1 / (1 − q)) samples (for
    q > 0.5), where it would only be the maximum: the latency table and the latency KPIs both
    read this, so they show the same numbers."""
    enough = len(samples) >= math.ceil(round(1 / (1 - q), 6)) if q > 0.5 else bool(samples)
    return percentile(list(samples), q) if enough else None


def rate_value(r: Rate) -> RateValue:
    """A rate as the record holds it: k, n, value and the Wilson interval."""
    return RateValue(r.k, r.n, r.value, r.wilson())


def breakdown(results: Sequence[ProbeResult]) -> dict[Phase, PhaseTotals]:
    """Totals per phase: overall, per scenario, and per question style."""
    out: dict[Phase, PhaseTotals] = {}
    for phase in [p for p in PHASES if any(r.phase == p for r in results)]:
        in_phase = [r for r in results if r.phase == phase]
        out[phase] = PhaseTotals(
            all=totals(in_phase),
            scenarios={s: totals(r for r in in_phase if r.scenario == s) for s in dict.fromkeys(r.scenario for r in in_phase)},
            styles={s: totals(r for r in in_phase if r.style == s) for s in STYLES},
        )
    return out


def latency(samples: dict[TimingLabel, tuple[float, ...]]) -> dict[TimingLabel, LatencyRow]:
    """n, p50, p95, p99 and max (ms) per timing label; a percentile is null where
    :func:`measured_percentile` says so."""
    out = {}
    for label, values in samples.items():
        vs = list(values)
        p50, p95, p99 = (measured_percentile(vs, q) for _, q in PERCENTILES)
        out[label] = LatencyRow(len(vs), p50, p95, p99, max(vs) if vs else None)
    return out


def _mean(values: list[int | None]) -> MeanValue:
    known = [v for v in values if v is not None]
    return MeanValue(round(sum(known) / len(known), 2) if known else None, len(known))
