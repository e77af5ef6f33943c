"""``memeval sweep MATRIX``: one server per (profile, repeat), each run compared to the baseline."""

from __future__ import annotations

import os

import click

from memeval.cli.executing import executor_options
from memeval.errors import Outcome
from memeval.runner.executor import make_executor, parse_shard
from memeval.spec.matrix import load_matrix
from memeval.sweep import SweepOptions, run_sweep


@click.command("sweep")
@click.argument("matrix_file", metavar="MATRIX", type=click.Path(dir_okay=False))
@click.option("--repeat", type=click.IntRange(1, 100), default=None, help="Runs per profile (default: the matrix's).")
@click.option("--parallel", type=click.IntRange(1, 64), default=None, help="Cells at once (default: the matrix's).")
@click.option("--out", default=None, type=click.Path(file_okay=False), help="Output folder instead of runs/<matrix>/.")
@click.option("--profiles", default="", help="Comma-separated profiles to run (default: all).")
@click.option("--templates", default=None, type=click.Path(file_okay=False, exists=True), help="Your own report templates.")
@click.option("--quiet", is_flag=True, help="Print only progress and the output path.")
@executor_options("cells", "label")
def command(matrix_file: str, repeat: int | None, parallel: int | None, out: str | None, profiles: str,
            templates: str | None, quiet: bool, executor: str, scheduler: str | None, workers: int | None,
            shard: str | None) -> Outcome:
    """Sweep the flag profiles of MATRIX; exit 3 when any cell failed, 130 on Ctrl-C."""
    matrix = load_matrix(matrix_file)
    slice_ = parse_shard(shard) if shard else None
    runner = make_executor(executor, scheduler, workers)
    try:
        options = SweepOptions(repeat, parallel, out, tuple(p for p in profiles.split(",") if p), templates, runner,
                               slice_)
        result = run_sweep(matrix, options, progress=lambda line: click.echo(line, err=True))
    finally:
        runner.close()
    if not quiet:
        click.echo(result.summary, nl=False)
    click.echo(f"wrote {os.path.join(result.folder, 'summary.md')}, summary.html and summary.json", err=True)
    if result.failed:
        click.echo(f"{len(result.failed)} of {len(result.results)} cell(s) failed", err=True)
        return Outcome.ENGINE
    return Outcome.OK
