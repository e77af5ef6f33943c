"""``memeval new scenario|suite|engine NAME``: commented starting files that already work."""

from __future__ import annotations

import click

from memeval.errors import Outcome
from memeval.scaffold import KINDS, scaffold


@click.command("new")
@click.argument("kind", type=click.Choice(KINDS))
@click.argument("name")
@click.option("--dir", "folder", default=".", show_default=True, type=click.Path(file_okay=False),
              help="Where to write (a suite's scenarios/ folder for a scenario).")
def command(kind: str, name: str, folder: str) -> Outcome:
    """Write a scenario (NAME.yaml), a suite (NAME/suite.yaml with one scenario) or an engine
    adapter package (memeval-NAME/, its own pyproject and entry point), never over a file."""
    for path in scaffold(kind, name, folder):
        click.echo(f"wrote {path}")
    return Outcome.OK
