"""``memeval regrade RUN_JSON``: grade a recorded run again from its stored packs, no engine
(see :mod:`memeval.llm.regrade`)."""

from __future__ import annotations

import click

from memeval.errors import Outcome
from memeval.llm.regrade import RegradeRequest, run_regrade


@click.command("regrade")
@click.argument("run_json", metavar="RUN_JSON", type=click.Path(dir_okay=False, exists=True))
@click.option("--llm", is_flag=True, help="Have a model answer every probe again from its stored pack.")
@click.option("--judge", is_flag=True, help="Have an LLM judge grade the model answers.")
@click.option("--no-cache", is_flag=True, help="Ask the model again instead of reusing cached answers.")
@click.option("--cache-salt", default="", metavar="TEXT", help="Keep these answers apart in the cache (e.g. a repeat id).")
@click.option("--out", default=None, type=click.Path(file_okay=False), help="Output folder (default: regrade/ beside RUN_JSON).")
@click.option("--templates", default=None, type=click.Path(file_okay=False, exists=True), help="Your own report templates.")
@click.option("--quiet", is_flag=True, help="Print only the output paths.")
def command(run_json: str, llm: bool, judge: bool, no_cache: bool, cache_salt: str, out: str | None,
            templates: str | None, quiet: bool) -> Outcome:
    """Grade RUN_JSON again (and re-answer or judge it) without touching an engine."""
    request = RegradeRequest(run_json, llm, judge, not no_cache, cache_salt, out, templates, quiet)
    run_regrade(request, echo=lambda line: click.echo(line, err=True), show=click.echo)
    return Outcome.OK
