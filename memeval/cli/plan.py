"""``memeval plan FILE``: print the steps a run would take, without running them."""

from __future__ import annotations

import click

from memeval.errors import Outcome
from memeval.plan import plan_suite, render_plan
from memeval.spec.engine_def import describe_engine, resolve_engine
from memeval.spec.load import load_suite


@click.command("plan")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--only", default="", help="Comma-separated scenario ids.")
@click.option("--engine", "engine_name", default="reference", show_default=True, help="Engine name or definition file.")
def command(file: str, only: str, engine_name: str) -> Outcome:
    """Print the engine (and the process it would start), then the expanded steps per scenario
    (write, settle, probe, synthesise, probe again, forget)."""
    suite = load_suite(file)
    click.echo(describe_engine(resolve_engine(engine_name, file)))
    chosen = tuple(s for s in only.split(",") if s)
    from memeval.runner.options import check_only

    check_only(suite, chosen)
    click.echo(render_plan(suite, plan_suite(suite, chosen)), nl=False)
    return Outcome.OK
