"""``memeval run SUITE``: run a suite on one engine, write run.json and run.md, print the report."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from dataclasses import replace

import click

from memeval.engines.definition import resolve_engine
from memeval.engines.server import engine_server
from memeval.errors import EXIT_ENGINE, EXIT_INTERRUPTED
from memeval.llm.settings import resolve
from memeval.report.files import output_dir, write_json, write_text
from memeval.report.render import render
from memeval.run.options import RunOptions
from memeval.run.checkpoint import open_journal
from memeval.run.suite import derive, run_suite
from memeval.spec.load import load_suite


@click.command("run")
@click.argument("suite_file", metavar="SUITE", type=click.Path(dir_okay=False))
@click.option("--engine", "engine_name", default="reference", show_default=True, help="Engine name or definition file.")
@click.option("--only", default="", help="Comma-separated scenario ids to run.")
@click.option("--label", default="", help="Run label (default: the engine name); output goes to runs/<label>/.")
@click.option("--out", default=None, type=click.Path(file_okay=False), help="Output folder instead of runs/<label>/.")
@click.option("--json", "json_path", default=None, type=click.Path(dir_okay=False), help="Also write run.json here.")
@click.option("--keep", is_flag=True, help="Do not forget what the run wrote.")
@click.option("--enrich-wait", "enrich_wait", type=float, default=None, help="Cap (s) on the enrichment drain at synthesis.")
@click.option("--settle-timeout", type=float, default=None, help="Seconds writes may take to become visible.")
@click.option("--llm", is_flag=True, help="Have a model answer every probe from its pack (see EVAL_LLM_URL, EVAL_LLM_MODEL).")
@click.option("--judge", is_flag=True, help="Also have an LLM judge grade the model answers (implies --llm).")
@click.option("--no-cache", is_flag=True, help="Ask the model again instead of reusing cached answers.")
@click.option("--cache-salt", default="", metavar="TEXT", help="Keep these answers apart in the cache (e.g. a repeat id).")
@click.option("--templates", default=None, type=click.Path(file_okay=False, exists=True), help="Your own report templates.")
@click.option("--resume", default=None, type=click.Path(file_okay=False, exists=True),
              help="Continue the killed or interrupted run in this folder (runs/<label>).")
@click.option("--quiet", is_flag=True, help="Print only the output paths.")
def command(suite_file: str, engine_name: str, only: str, label: str, out: str | None, json_path: str | None,
            keep: bool, enrich_wait: float | None, settle_timeout: float | None, llm: bool, judge: bool, no_cache: bool,
            cache_salt: str, templates: str | None, resume: str | None, quiet: bool) -> int:
    """Run SUITE (a suite or scenario YAML file) and report on it."""
    suite = load_suite(suite_file)
    engine_def = resolve_engine(engine_name, suite_file)
    llm = llm or judge
    answerer = resolve(suite.llm, os.environ, base_dir=os.path.dirname(suite_file), judge=judge, cache=not no_cache,
                       salt=cache_salt) if llm else None
    wait = enrich_wait if enrich_wait is not None else suite.defaults.enrich_wait_s
    wait = wait if wait is not None else engine_def.enrich_wait_s
    options = RunOptions(engine=engine_def.name, only=tuple(s for s in only.split(",") if s), label=label or engine_def.name,
                         keep=keep, enrich_wait_s=wait, settle_timeout_s=settle_timeout, llm=llm)
    folder = output_dir(options.label, resume or out)
    journal = open_journal(folder, suite, options, resume is not None)
    if resume and not label and journal.label:  # a resumed run keeps the label it was started with
        options = replace(options, label=journal.label)
    with _term_as_interrupt(), engine_server(engine_def, os.path.join(folder, "server.log")) as overrides:
        engine = engine_def.create(overrides)
        try:
            record = run_suite(suite, engine, options, (lambda _: None) if quiet else _progress, journal)
        finally:
            engine.close()
    if answerer is not None and not record["interrupted"]:  # after Ctrl-C stop now; a resume answers
        from memeval.llm.answer import answer_record, summary_lines  # imports openai (~1 s): only when asked

        try:
            record = answer_record(record, answerer)
        except KeyboardInterrupt:  # keep what the engine measured; answers (if any) as far as they got
            record = derive({**record, "interrupted": True})
        else:
            for line in summary_lines(record["answerer"]):
                click.echo(line, err=True)
    write_json(os.path.join(folder, "run.json"), record)
    if json_path:
        write_json(json_path, record)
    report = render(record, "run.md.j2", templates)
    write_text(os.path.join(folder, "run.md"), report)
    write_text(os.path.join(folder, "run.html"), render(record, "run.html.j2", templates))
    if not quiet:
        click.echo(report)
    click.echo(f"wrote {os.path.join(folder, 'run.json')}, run.md and run.html", err=True)
    if record["interrupted"]:
        click.echo(f"interrupted: resume with  memeval run {suite_file} --resume {folder}", err=True)
        return EXIT_INTERRUPTED
    failed = [s for s in record["scenarios"] if s["status"] != "ok"]
    for scenario in failed:
        click.echo(f"error: scenario {scenario['id']}: {scenario['error']}", err=True)
    return EXIT_ENGINE if failed else 0


def _progress(line: str) -> None:
    click.echo(line, err=True)


@contextlib.contextmanager
def _term_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM (a cancelled CI job, a supervisor) stops the run as Ctrl-C does:
    what was written is forgotten, an engine server the run started is stopped, run.json keeps what
    finished, exit 130. Python's default would end the process at once and orphan that server."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
