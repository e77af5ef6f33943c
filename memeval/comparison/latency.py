"""Latency changes from per-call samples, not from one percentile per run.

A run's p99 over ~100 calls is close to its maximum: two runs of the same code on a loaded
machine differ there by tens of percent. So a latency KPI (:data:`LATENCY_KPIS`) is compared on
the samples both sides hold (``run.json`` ``timings``, every repeat's pooled):

- **Enough tail first.** A percentile q is tested only when each side has at least
  :data:`TAIL_CALLS` calls beyond it (n·(1 − q) ≥ 10: p50 from 20 calls, p95 from 200, p99 from
  1,000), and a total (enrichment drain, belief builds) only from :data:`TAIL_CALLS` samples a
  side; below that the cell says *needs repeats* (``--repeat`` pools their calls) instead of a
  mark.
- **Repeats for the machine.** Most of latency's noise belongs to the run, not the call: the
  load the machine carried while it ran. One run a side cannot tell that apart from the engine's
  speed (two runs of the same code differ 4× in p50 on a busy machine), so a side with fewer than
  :data:`MIN_RUNS` runs is reported with its p and n but marked *needs repeats*; with repeats,
  the spread of the repeats' values is the noise the change must exceed
  (:mod:`memeval.comparison.noise`) and the calls of every repeat are pooled.
- **Clustered bootstrap.** Calls of one scenario share a haystack and a stretch of wall-clock
  time (and whatever load the machine had then), so they are not independent: whole scenarios
  (of every repeat) are resampled, each side apart, :data:`~memeval.stats.clustered.RESAMPLES`
  times with the fixed :data:`~memeval.stats.clustered.SEED`; the statistic is the percentile
  of the pooled calls (the mean per call for a total). ``p`` is the two-sided bootstrap p-value
  of the difference (twice the smaller share of resampled differences on either side of 0), and
  the 95% interval its 2.5 and 97.5 percentiles. A record without ``timing_scenarios`` (older
  than this rule) treats every call as its own cluster and says so in ``method``.

The noise rule (:mod:`memeval.comparison.noise`) still applies on top: a move needs |Δ| beyond the
floor and p < α.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np

from memeval.comparison.groups import Side
from memeval.record import RunRecord, TimingLabel
from memeval.stats.clustered import RESAMPLES, SEED

TAIL_CALLS = 10
"""Fewest calls a side needs beyond a percentile (or in all, for a total) for it to be tested."""
MIN_RUNS = 2
"""Fewest runs a side needs for a latency change to count: the run-to-run noise is measured only then."""
CLUSTERED, BY_CALL = "cluster bootstrap", "bootstrap over calls"
Select = Callable[[TimingLabel], bool]
LATENCY_KPIS: dict[str, tuple[Select, float | None]] = {
    **{f"{name} {label}": (select, q) for name, select in (("pre_turn", lambda t: t.is_pre_turn),
                                                           ("probe", lambda t: t.is_probe))
       for label, q in (("p50", .5), ("p95", .95), ("p99", .99))},
    "enrichment drain": (lambda t: t == TimingLabel.DRAIN, None),
    "belief builds": (lambda t: t == TimingLabel.BUILDS, None),
}
"""Latency KPI name → (which timing labels feed it, its percentile; None for a total)."""


@dataclass(frozen=True)
class LatencyTest:
    """A latency KPI's test: the calls and clusters of each side, the p-value and 95% interval of
    the difference (ms; None when not tested), and why it was not (``needs``, one line)."""

    calls: tuple[int, int]
    clusters: tuple[int, int]
    p: float | None
    ci95: tuple[float, float] | None
    method: str
    needs: str | None


def samples(runs: tuple[RunRecord, ...], select: Select) -> tuple[list[float], list[Hashable]]:
    """Every sample of the labels ``select`` picks, over ``runs``, with its cluster: (run, scenario)
    where the record says which scenario timed it, else the call itself."""
    values: list[float] = []
    clusters: list[Hashable] = []
    for r, run in enumerate(runs):
        for label, got in run.timings.items():
            if not select(label):
                continue
            counts = (run.timing_scenarios or {}).get(label)
            if counts is not None and sum(counts.values()) == len(got):
                clusters += [(r, sid) for sid, count in counts.items() for _ in range(count)]
            else:
                clusters += [(r, label, i) for i in range(len(got))]
            values += got
    return values, clusters


def _statistic(values: np.ndarray, q: float | None) -> float:
    """The mean, or the percentile as :func:`memeval.stats.basic.percentile` reads it (the
    sorted sample at index round((n − 1)·q))."""
    if q is None:
        return float(values.mean())
    k = int(round((len(values) - 1) * q))
    return float(np.partition(values, k)[k])


def _resample(values: list[float], clusters: list[Hashable], q: float | None, rng: np.random.Generator) -> np.ndarray:
    groups: dict[Hashable, list[float]] = {}
    for v, c in zip(values, clusters):
        groups.setdefault(c, []).append(v)
    arrays = [np.asarray(g) for g in groups.values()]
    picks = rng.integers(0, len(arrays), size=(RESAMPLES, len(arrays)))
    if q is None:  # the mean per call: from per-cluster sums and sizes, without joining samples
        sums, sizes = np.array([a.sum() for a in arrays]), np.array([len(a) for a in arrays])
        return np.asarray(sums[picks].sum(axis=1) / sizes[picks].sum(axis=1))
    return np.array([_statistic(np.concatenate([arrays[i] for i in row]), q) for row in picks])


def _needs(n: int, q: float | None) -> str | None:
    tail = n if q is None else math.floor(n * (1 - q) + 1e-9)
    if tail >= TAIL_CALLS:
        return None
    what = "samples" if q is None else f"calls beyond p{round(100 * q)}"
    return f"{n} calls give {tail} {what}; {TAIL_CALLS} needed: needs repeats (--repeat)"


def latency_test(base: Side, other: Side, name: str) -> LatencyTest | None:
    """The test of latency KPI ``name`` between the sides (None: not a latency KPI of
    :data:`LATENCY_KPIS`, or a side without samples)."""
    if name not in LATENCY_KPIS:
        return None
    select, q = LATENCY_KPIS[name]
    (a, ca), (b, cb) = samples(base.runs, select), samples(other.runs, select)
    if not a or not b:
        return None
    calls, clusters = (len(a), len(b)), (len(set(ca)), len(set(cb)))
    method = CLUSTERED if all(r.timing_scenarios is not None for r in (*base.runs, *other.runs)) else BY_CALL
    needs = _needs(min(calls), q)
    if needs or min(clusters) < 2:
        return LatencyTest(calls, clusters, None, None, method, needs or "one cluster a side: needs repeats (--repeat)")
    rng = np.random.default_rng(SEED)
    diff = _resample(b, cb, q, rng) - _resample(a, ca, q, rng)
    p = min(1.0, 2 * min(float(np.mean(diff <= 0)), float(np.mean(diff >= 0))))
    low, high = np.percentile(diff, [2.5, 97.5])
    runs = min(len(base.runs), len(other.runs))
    few = None if runs >= MIN_RUNS else f"one run a side: the machine's load is not told apart from the engine's speed; " \
                                       f"needs repeats (--repeat, {MIN_RUNS} or more a side)"
    return LatencyTest(calls, clusters, round(p, 4), (round(float(low), 4), round(float(high), 4)), method, few)
