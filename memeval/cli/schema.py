"""``memeval schema [NAME]``: print the JSON Schemas specs are validated against."""

from __future__ import annotations

import json

import click

from memeval.errors import Outcome
from memeval.spec.validate import available_schemas, schema


@click.command("schema")
@click.argument("name", required=False, type=click.Choice(available_schemas()))
def command(name: str | None) -> Outcome:
    """Print one schema (suite, scenario, engine, matrix, run), or list them."""
    if name is None:
        for known in available_schemas():
            click.echo(f"{known}: {schema(known).get('description', '')}")
        return Outcome.OK
    click.echo(json.dumps(schema(name), indent=2))
    return Outcome.OK
