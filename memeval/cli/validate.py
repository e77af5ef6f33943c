"""``memeval validate FILE…``: check specs and report every error at once; runs nothing."""

from __future__ import annotations

import click

from memeval.errors import Outcome, SpecError, SpecIssue
from memeval.spec.specfile import load_any


@click.command("validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
def command(files: tuple[str, ...]) -> Outcome:
    """Validate suites, scenarios, engine definitions and matrices; exit 2 on any error."""
    issues: list[SpecIssue] = []
    for path in files:
        try:
            what = load_any(path)
        except SpecError as err:
            issues += err.issues
            continue
        click.echo(f"{path}: ok ({what})")
    if issues:
        raise SpecError(issues)
    return Outcome.OK
