"""``memeval merge DIR…``: join the folders of ``--shard i/N`` runs into one run and report."""

from __future__ import annotations

import os

import click

from memeval.runner.merge import merge_folders


@click.command("merge")
@click.argument("folders", metavar="DIR...", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("-o", "--out", default=None, type=click.Path(file_okay=False),
              help="Output folder instead of runs/<label>/<run id>/.")
@click.option("--force", is_flag=True, help="Replace the run record --out already holds.")
@click.option("--templates", default=None, type=click.Path(file_okay=False, exists=True), help="Your own report templates.")
@click.option("--quiet", is_flag=True, help="Print only the output path.")
def command(folders: tuple[str, ...], out: str | None, force: bool, templates: str | None, quiet: bool) -> None:
    """Merge the shards in DIR... (one run folder, or run.json, per shard); exit 2 when they are
    not the slices of one run."""
    folder, report = merge_folders(folders, out, force, templates)
    if not quiet:
        click.echo(report)
    click.echo(f"wrote {os.path.join(folder, 'run.json')}, run.md and run.html", err=True)
