"""``memeval ls [DIR]``: the runs under a folder, one line each, newest first."""

from __future__ import annotations

import click

from memeval.errors import Outcome
from memeval.report.runs_index import find_runs, summary_line


@click.command("ls")
@click.argument("folder", default="runs", metavar="[DIR]", type=click.Path(file_okay=False))
def command(folder: str) -> Outcome:
    """List the runs under DIR (default: runs): label, run id, suite, engine, date, the headline
    KPI with its n, and the run.json path. Unreadable run.json files are named on stderr."""
    found = find_runs(folder)
    for run in found.runs:
        click.echo(summary_line(run))
    for problem in found.unreadable:
        click.echo(f"skipped {problem}", err=True)
    if not found.runs:
        click.echo(f"no runs under {folder}", err=True)
    return Outcome.OK
