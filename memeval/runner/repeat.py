"""``memeval run --repeat N``: the suite run N times, each a run of its own (a new run id, so
fresh tenants, and its own answer-cache salt, so no repeat is answered from another's cache),
then one report of the churn between them: the per-probe flip rate (probes whose verdict was
not the same in every repeat) and the spread of each KPI (min, max, sample SD).

With ``--out DIR`` repeat i is written to ``DIR/repeat-i`` and the churn report to
``DIR/repeats.md`` and ``repeats.json``; otherwise each repeat goes to ``runs/<label>/<run id>/``
and the churn report beside them, in ``runs/<label>/repeats-<first run id>/``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace

from memeval.errors import Outcome, UsageError, exit_code
from memeval.record import KpiGroup, RepeatNote, RunRecord, Unit
from memeval.record.codec import to_json
from memeval.report.files import read_run, write_json, write_text
from memeval.report.view import DASH, fmt_kpi
from memeval.runner.checkpoint import new_run_id
from memeval.runner.session import Echo, RunRequest, run_once
from memeval.stats.clustered import flip_rate, spread
from memeval.score.kpi import HEADLINE, METRICS_BY_NAME

FLIP_KPIS = HEADLINE
"""The probe verdicts whose churn the report counts: the headline accuracy KPIs."""


def run_repeats(req: RunRequest, repeats: int, echo: Echo, show: Echo) -> Outcome:
    """Run ``req`` ``repeats`` times and write the churn report; the worst outcome of the
    repeats (by exit code) is returned.

    Raises:
        UsageError: ``repeats`` < 2, or ``--resume`` / ``--json`` given with it.
    """
    if repeats < 2:
        raise UsageError(f"--repeat: {repeats}; give at least 2 (one run needs no --repeat)")
    if req.resume or req.json_path:
        raise UsageError("--repeat cannot be combined with --resume or --json")
    outcomes, folders = [], []
    group = new_run_id()
    for i in range(1, repeats + 1):
        echo(f"repeat {i} of {repeats}")
        salt = f"{req.cache_salt}/repeat-{i}" if req.cache_salt else f"repeat-{i}"
        out = os.path.join(req.out, f"repeat-{i}") if req.out else None
        outcome, folder = run_once(replace(req, out=out, cache_salt=salt, repeat=RepeatNote(group, i, repeats)), echo, show)
        outcomes.append(outcome)
        folders.append(folder)
        if outcome == Outcome.INTERRUPTED:
            break
    records = [read_run(os.path.join(f, "run.json")) for f in folders]
    target = req.out or os.path.join(os.path.dirname(folders[0]), f"repeats-{records[0].run_id}")
    os.makedirs(target, exist_ok=True)
    data = churn(records)
    write_json(os.path.join(target, "repeats.json"), to_json(data))
    write_text(os.path.join(target, "repeats.md"), render_churn(data))
    echo(f"wrote {os.path.join(target, 'repeats.md')} and repeats.json")
    return max(outcomes, key=exit_code)


@dataclass(frozen=True)
class Flips:
    """One verdict's churn: ``k`` of ``n`` probes (scored in two or more repeats) flipped."""

    kpi: str
    k: int
    n: int
    rate: float | None


@dataclass(frozen=True)
class KpiSpread:
    """One KPI over the repeats: ``n`` repeats with a value, min, max and sample SD."""

    group: str
    name: str
    unit: Unit
    n: int
    low: float | None
    high: float | None
    sd: float | None


@dataclass(frozen=True)
class Churn:
    """The churn between repeats (repeats.json is its JSON)."""

    runs: tuple[str, ...]
    flips: tuple[Flips, ...]
    spread: tuple[KpiSpread, ...]


def churn(records: Sequence[RunRecord]) -> Churn:
    """The flip rate of each of :data:`FLIP_KPIS` and the spread of every KPI over ``records``."""
    flips = []
    for name in FLIP_KPIS:
        metric = METRICS_BY_NAME[("accuracy", name)]
        r = flip_rate([{k: bool(v) for k, v in metric.outcomes(run.probes).items()} for run in records])
        flips.append(Flips(name, r.k, r.n, None if r.value is None else round(r.value, 4)))
    values: dict[tuple[KpiGroup, str], list[float | None]] = {}
    units: dict[tuple[KpiGroup, str], Unit] = {}
    for run in records:
        for k in run.kpis:
            values.setdefault((k.group, k.name), []).append(k.value)
            units[(k.group, k.name)] = k.unit
    spreads = [KpiSpread(group, name, units[(group, name)], s.n, s.low, s.high, s.sd)
               for (group, name), vs in values.items() for s in (spread(vs),)]
    return Churn(tuple(r.run_id for r in records), tuple(flips), tuple(spreads))


def render_churn(data: Churn) -> str:
    """repeats.md: the flip rates, then each KPI's spread over the repeats."""
    lines = [f"# memeval run --repeat {len(data.runs)}", "", f"Runs: {', '.join(f'`{r}`' for r in data.runs)}.", "",
             "## Flip rate (probes whose verdict was not the same in every repeat)", "",
             "| Verdict | Flipped | Of | Flip rate |", "|---|---|---|---|"]
    for f in data.flips:
        rate = DASH if f.rate is None else f"{100 * f.rate:.1f}%"
        lines.append(f"| {f.kpi} | {f.k} | {f.n} | {rate} |")
    lines += ["", "## Spread of each KPI over the repeats", "", "| Group | KPI | Repeats | Min | Max | SD |",
              "|---|---|---|---|---|---|"]
    for s in data.spread:
        low, high, sd = (fmt_kpi(v, s.unit) for v in (s.low, s.high, s.sd))
        lines.append(f"| {s.group} | {s.name} | {s.n} | {low} | {high} | {sd} |")
    return "\n".join(lines) + "\n"
