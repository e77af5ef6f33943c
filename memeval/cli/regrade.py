"""``memeval regrade RUN_JSON``: grade a recorded run again from its stored packs, no engine.

Without options it re-grades the stored extractive and model answers with the current grader;
``--llm`` has a model answer every probe again, ``--judge`` has an LLM judge grade the model
answers. Writes run.json, run.md and run.html to ``--out`` (default ``regrade/`` beside the input); it
never overwrites the input.
"""

from __future__ import annotations

import os

import click

from memeval.errors import UsageError
from memeval.llm.settings import resolve
from memeval.report.files import read_run
from memeval.report.publish import publish


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
            templates: str | None, quiet: bool) -> int:
    """Grade RUN_JSON again (and re-answer or judge it) without touching an engine."""
    record = read_run(run_json)
    folder = out or os.path.join(os.path.dirname(os.path.abspath(run_json)), "regrade")
    target = os.path.join(folder, "run.json")
    if os.path.exists(target) and os.path.samefile(target, run_json):
        raise UsageError(f"--out {folder}: would overwrite the input {run_json}; choose another folder")
    settings = None
    if llm or judge:
        suite = record["suite"]
        settings = resolve(suite["resolved"].get("llm", {}), os.environ, base_dir=os.path.dirname(suite["source"]),
                           judge=judge, cache=not no_cache, salt=cache_salt)
    from memeval.llm.answer import regrade, summary_lines  # imports openai (~1 s): only when run

    record = regrade(record, settings, answer=llm, source=run_json)
    if record["answerer"] and (llm or judge):
        for line in summary_lines(record["answerer"]):
            click.echo(line, err=True)
    report = publish(record, folder, templates)
    if not quiet:
        click.echo(report)
    click.echo(f"wrote {target}, run.md and run.html", err=True)
    return 0
