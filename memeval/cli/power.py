"""``memeval power RUN.json…``: the probes, clusters and repeats a suite needs to see a change
(see :mod:`memeval.score.power`)."""

from __future__ import annotations


import click

from memeval.errors import Outcome, UsageError
from memeval.report.files import read_run
from memeval.score.clusters import clustering
from memeval.score.power import KPIS, PHASES, plan, probe_outcomes, render
from memeval.score.power import measure as measure_runs


@click.command("power")
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--delta", default=5.0, show_default=True, type=float, metavar="PP",
              help="The change to detect, in percentage points.")
@click.option("--kpi", default="pack-hit", show_default=True, type=click.Choice(KPIS),
              help="Which probe verdict to plan for.")
@click.option("--phase", default="synthesis", show_default=True, type=click.Choice(PHASES),
              help="The phase whose probes are counted (each probe once).")
def command(runs: tuple[str, ...], delta: float, kpi: str, phase: str) -> Outcome:
    """Plan from RUN.json files (repeats of one suite): sizes needed to detect --delta points."""
    if not delta > 0:
        raise UsageError(f"--delta must be a positive number of points, got {delta}")
    records = [read_run(path) for path in runs]
    clusters = clustering(records[0].suite.resolved)  # the first run's suite declares the unit
    outcomes = [probe_outcomes(record.probes, kpi, clusters, phase) for record in records]
    click.echo(render(plan(measure_runs(outcomes, clusters.unit), delta), kpi, phase), nl=False)
    return Outcome.OK
