"""``memeval power RUN.json…``: the probes, clusters and repeats a suite needs to see a change
(see :mod:`memeval.score.power`)."""

from __future__ import annotations

import json

import click

from memeval.errors import UsageError
from memeval.score.power import KPIS, plan, probe_outcomes, render
from memeval.score.power import measure as measure_runs


@click.command("power")
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--delta", default=5.0, show_default=True, type=float, metavar="PP",
              help="The change to detect, in percentage points.")
@click.option("--kpi", default="pack-hit", show_default=True, type=click.Choice(KPIS),
              help="Which probe verdict to plan for.")
def command(runs: tuple[str, ...], delta: float, kpi: str) -> int:
    """Plan from RUN.json files (repeats of one suite): sizes needed to detect --delta points."""
    if not delta > 0:
        raise UsageError(f"--delta must be a positive number of points, got {delta}")
    outcomes = []
    for path in runs:
        try:
            with open(path, encoding="utf-8") as fh:
                outcomes.append(probe_outcomes(json.load(fh), kpi))
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise UsageError(f"{path}: not a readable run.json ({type(err).__name__}: {err})") from err
    click.echo(render(plan(measure_runs(outcomes), delta), kpi), nl=False)
    return 0
