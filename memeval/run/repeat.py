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
from collections.abc import Callable, Sequence
from dataclasses import replace

from memeval.errors import Outcome, UsageError, exit_code
from memeval.record import JsonObject, RunRecord
from memeval.report.files import read_run, write_json, write_text
from memeval.report.view import fmt_kpi
from memeval.run.session import RunRequest, run_once
from memeval.score.clustered import flip_rate, spread
from memeval.score.kpi import METRICS_BY_NAME

Echo = Callable[[str], None]
FLIP_KPIS = ("pack hit", "extractive answer", "model answer")
"""The probe verdicts whose churn the report counts."""


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
    for i in range(1, repeats + 1):
        echo(f"repeat {i} of {repeats}")
        salt = f"{req.cache_salt}/repeat-{i}" if req.cache_salt else f"repeat-{i}"
        out = os.path.join(req.out, f"repeat-{i}") if req.out else None
        outcome, folder = run_once(replace(req, out=out, cache_salt=salt), echo, show)
        outcomes.append(outcome)
        folders.append(folder)
        if outcome == Outcome.INTERRUPTED:
            break
    records = [read_run(os.path.join(f, "run.json")) for f in folders]
    target = req.out or os.path.join(os.path.dirname(folders[0]), f"repeats-{records[0].run_id}")
    os.makedirs(target, exist_ok=True)
    data = churn(records)
    write_json(os.path.join(target, "repeats.json"), data)
    write_text(os.path.join(target, "repeats.md"), render_churn(data))
    echo(f"wrote {os.path.join(target, 'repeats.md')} and repeats.json")
    return max(outcomes, key=exit_code)


def churn(records: Sequence[RunRecord]) -> JsonObject:
    """``{runs: [run ids], flips: [{kpi, k, n, rate}], spread: [{group, name, unit, n, low, high, sd}]}``
    over the repeats ``records``."""
    flips: list[JsonObject] = []
    for name in FLIP_KPIS:
        metric = METRICS_BY_NAME[("accuracy", name)]
        r = flip_rate([{k: bool(v) for k, v in metric.outcomes(run.probes).items()} for run in records])
        flips.append({"kpi": name, "k": r.k, "n": r.n, "rate": None if r.value is None else round(r.value, 4)})
    kpis: dict[tuple[str, str], list[float | None]] = {}
    units: dict[tuple[str, str], str] = {}
    for run in records:
        for k in run.kpis:
            kpis.setdefault((k.group, k.name), []).append(k.value)
            units[(k.group, k.name)] = k.unit
    spreads: list[JsonObject] = []
    for (group, name), values in kpis.items():
        s = spread(values)
        spreads.append({"group": group, "name": name, "unit": units[(group, name)], "n": s.n, "low": s.low,
                        "high": s.high, "sd": s.sd})
    return {"runs": [r.run_id for r in records], "flips": flips, "spread": spreads}


def render_churn(data: JsonObject) -> str:
    """repeats.md: the flip rates, then each KPI's spread over the repeats."""
    runs = data["runs"]
    assert isinstance(runs, list)
    lines = [f"# memeval run --repeat {len(runs)}", "", f"Runs: {', '.join(f'`{r}`' for r in runs)}.", "",
             "## Flip rate (probes whose verdict was not the same in every repeat)", "",
             "| Verdict | Flipped | Of | Flip rate |", "|---|---|---|---|"]
    for f in data["flips"]:  # type: ignore[union-attr]
        assert isinstance(f, dict)
        rate = "–" if f["rate"] is None else f"{100 * float(str(f['rate'])):.1f}%"
        lines.append(f"| {f['kpi']} | {f['k']} | {f['n']} | {rate} |")
    lines += ["", "## Spread of each KPI over the repeats", "", "| Group | KPI | Repeats | Min | Max | SD |",
              "|---|---|---|---|---|---|"]
    for s in data["spread"]:  # type: ignore[union-attr]
        assert isinstance(s, dict)
        unit = str(s["unit"])
        low, high, sd = (fmt_kpi(s[k] if isinstance(s[k], (int, float)) else None, unit) for k in ("low", "high", "sd"))  # type: ignore[arg-type]
        lines.append(f"| {s['group']} | {s['name']} | {s['n']} | {low} | {high} | {sd} |")
    return "\n".join(lines) + "\n"
