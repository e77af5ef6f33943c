"""``memeval run SUITE``: run a suite on one engine, write run.json, run.md and run.html."""

from __future__ import annotations

import click

from memeval.cli.executing import executor_options
from memeval.cli.numbers import Seconds
from memeval.errors import Outcome
from memeval.runner.executor import MAX_JOBS
from memeval.runner.session import RunRequest, run_session


@click.command("run")
@click.argument("suite_file", metavar="SUITE", type=click.Path(dir_okay=False))
@click.option("--engine", "engine_name", default=None,
              help="Engine name or definition file [default: reference; on --resume, the run's].")
@click.option("--only", default="", help="Comma-separated scenario ids to run.")
@click.option("--label", default="", help="Run label (default: the engine name); output goes to runs/<label>/<run id>/.")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Output folder instead of runs/<label>/<run id>/ (refused if it holds another run; see --force).")
@click.option("--json", "json_path", default=None, type=click.Path(dir_okay=False), help="Also write run.json here.")
@click.option("--keep", is_flag=True, help="Do not forget what the run wrote.")
@click.option("--enrich-wait", "enrich_wait", type=Seconds(zero_ok=True), default=None,
              help="Cap (s, >= 0) on the enrichment drain at synthesis.")
@click.option("--settle-timeout", type=Seconds(), default=None, help="Seconds (> 0) writes may take to become visible.")
@click.option("--llm", is_flag=True, help="Have a model answer every probe from its pack (see EVAL_LLM_URL, EVAL_LLM_MODEL).")
@click.option("--judge", is_flag=True, help="Also have an LLM judge grade the model answers (implies --llm).")
@click.option("--judge-repeats", "judge_repeats", type=click.IntRange(min=1), default=1, metavar="N",
              help="Judge every model answer N times (fresh calls, their own cache salts) and report how often the "
                   "verdicts agree (unanimity and Fleiss' kappa); applies to --judge and to a benchmark's judge grader.")
@click.option("--no-cache", is_flag=True, help="Ask the model again instead of reusing cached answers.")
@click.option("--cache-salt", default="", metavar="TEXT", help="Keep these answers apart in the cache (e.g. a repeat id).")
@click.option("--templates", default=None, type=click.Path(file_okay=False, exists=True), help="Your own report templates.")
@click.option("--resume", default=None, type=click.Path(file_okay=False, exists=True),
              help="Continue the killed or interrupted run in this folder (or runs/<label>: its latest run), "
                   "with the engine and options it was started with.")
@click.option("--force", is_flag=True, help="Replace the run record that --out or --json already holds.")
@click.option("--quiet", is_flag=True, help="Print only the output paths (and errors).")
@click.option("--junit", "junit", default=None, type=click.Path(dir_okay=False),
              help="Also write JUnit XML here: one test case per probe.")
@click.option("--fail-under", "fail_under", multiple=True, metavar="KPI=VALUE",
              help="Exit 1 when KPI (e.g. pack_hit_synthesis, pre_turn_p95_ms) is worse than VALUE; repeatable. "
                   "Rates as 0.9 or 90%.")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="What stdout gets: the Markdown report, or one JSON summary for scripts.")
@click.option("--repeat", "repeats", type=click.IntRange(min=1), default=1, metavar="N",
              help="Run the suite N times (fresh tenants, separate answer caches) and report the per-probe flip "
                   "rate and each KPI's spread in repeats.md.")
@click.option("--jobs", type=click.IntRange(1, MAX_JOBS), default=1, show_default=True, metavar="N",
              help="Run N scenarios at once on threads sharing the engine (for engines that wait on a network; "
                   "the adapter must be safe across threads).")
@executor_options("scenarios", "id")
def command(suite_file: str, engine_name: str | None, only: str, label: str, out: str | None, json_path: str | None,
            keep: bool, enrich_wait: float | None, settle_timeout: float | None, llm: bool, judge: bool, no_cache: bool,
            cache_salt: str, templates: str | None, resume: str | None, force: bool, quiet: bool, junit: str | None,
            fail_under: tuple[str, ...], output_format: str, repeats: int, executor: str, scheduler: str | None,
            workers: int | None, shard: str | None, judge_repeats: int, jobs: int) -> Outcome:
    """Run SUITE (a suite or scenario YAML file) and report on it. Exit 1 when a gate (the
    suite's ``gates:`` or --fail-under) fails."""
    request = RunRequest(suite_file, engine=engine_name, only=tuple(s for s in only.split(",") if s), label=label,
                         out=out, json_path=json_path, keep=keep, enrich_wait_s=enrich_wait,
                         settle_timeout_s=settle_timeout, llm=llm, judge=judge, cache=not no_cache,
                         cache_salt=cache_salt, templates=templates, resume=resume, quiet=quiet, force=force,
                         junit=junit, fail_under=fail_under, format=output_format, executor=executor,
                         scheduler=scheduler, workers=workers, jobs=jobs, shard=shard, judge_repeats=judge_repeats)
    if repeats > 1:
        from memeval.runner.repeat import run_repeats  # the churn report's statistics load only for --repeat

        return run_repeats(request, repeats, echo=lambda line: click.echo(line, err=True), show=click.echo)
    return run_session(request, echo=lambda line: click.echo(line, err=True), show=click.echo)
