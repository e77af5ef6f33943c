"""``memeval validate PATH…``: check specs and report every error at once; runs nothing.

A folder stands for every spec YAML under it (other YAML, such as a compose file, is skipped
and said so). Warnings (an expectation the scenario never writes) are printed and leave the
exit code 0, unless ``--strict`` makes them errors.
"""

from __future__ import annotations

import dataclasses
import os

import click

from memeval.errors import Outcome, SpecError, SpecIssue
from memeval.score.grounding import ungrounded
from memeval.spec.errata import errata_warnings
from memeval.spec.specfile import is_spec, load_spec, spec_files


@click.command("validate")
@click.argument("paths", metavar="PATH…", nargs=-1, required=True, type=click.Path())
@click.option("--strict", is_flag=True, help="Make warnings errors (exit 2).")
def command(paths: tuple[str, ...], strict: bool) -> Outcome:
    """Validate suites, scenarios, engine definitions and matrices (files, or folders of them);
    exit 2 on any error."""
    issues: list[SpecIssue] = []
    warnings: list[SpecIssue] = []
    for path in paths:
        folder = os.path.isdir(path)
        files = spec_files(path) if folder else [path]
        checked = 0
        for file in files:
            if folder and not is_spec(file):
                click.echo(f"{file}: skipped (not a memeval spec)")
                continue
            checked += 1
            try:
                loaded = load_spec(file)
            except SpecError as err:
                issues += err.issues
                continue
            found = ungrounded(loaded.suite) + errata_warnings(loaded.suite) if loaded.suite else []
            warnings += found
            if not (strict and found):
                note = f", {len(found)} warning(s)" if found else ""
                click.echo(f"{file}: ok ({loaded.summary}{note})")
        if folder:
            click.echo(f"{path}: {checked} spec file(s) checked")
    warnings = list(dict.fromkeys(warnings))  # a folder may check a scenario alone and in its suite
    if strict:
        issues += warnings
    else:
        for issue in sorted(warnings, key=lambda i: (i.file, i.line, i.column)):
            click.echo(dataclasses.replace(issue, message=f"warning: {issue.message}").render(), err=True)
    if issues:
        raise SpecError(list(dict.fromkeys(issues)))
    return Outcome.OK
