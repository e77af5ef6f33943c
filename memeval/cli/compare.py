"""``memeval compare RUN.json…``: configurations against a baseline, moves beyond noise only."""

from __future__ import annotations

import click

from memeval.comparison import compare_files, compare_records, regressions, render_comparison
from memeval.comparison.groups import GROUP_BY
from memeval.errors import GateFailed, Outcome, UsageError
from memeval.report.runs_index import latest as latest_runs
from memeval.report.files import write_json, write_text


@click.command("compare")
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--baseline", default=None,
              help="Profile (or label) to compare against; default: 'baseline', else the first.")
@click.option("--json", "json_path", default=None, type=click.Path(dir_okay=False),
              help="Also write the comparison as JSON here.")
@click.option("--html", "html_path", default=None, type=click.Path(dir_okay=False),
              help="Also write the comparison as one self-contained HTML page here (grid, frontier, flips).")
@click.option("--fail-on-regression", is_flag=True, help="Exit 1 when any KPI moved for the worse (▼).")
@click.option("--templates", default=None, type=click.Path(file_okay=False, exists=True), help="Your own report templates.")
@click.option("--allow-setup-diff", "allow", multiple=True, metavar="FIELD",
              help="Compare runs whose scoring setups differ in FIELD (a dotted path such as judge.prompt, "
                   "or a comma-separated list; repeatable); their cells are labelled with it.")
@click.option("--group-by", "group_by", type=click.Choice(GROUP_BY), default="run", show_default=True,
              help="run: each run its own column, except --repeat runs and a sweep's profiles; "
                   "label: runs sharing a label are repeats of one column.")
@click.option("--latest", type=click.IntRange(min=2), default=None, metavar="N",
              help="Compare the last N runs of the one LABEL given instead of files (found under --runs).")
@click.option("--runs", "runs_dir", default="runs", show_default=True, type=click.Path(file_okay=False),
              help="Where --latest looks for runs.")
def command(runs: tuple[str, ...], baseline: str | None, json_path: str | None, html_path: str | None,
            fail_on_regression: bool, templates: str | None, allow: tuple[str, ...], group_by: str,
            latest: int | None, runs_dir: str) -> Outcome:
    """Compare RUN.json files (or, with --latest N LABEL, a label's last N runs, the oldest as
    baseline), each its own column (repeats averaged), judged against a baseline. Runs scored
    under different setups (judge, prompts, suite, pack policy, …) are refused unless the
    differences are named with --allow-setup-diff; runs of different suites only with
    --allow-setup-diff suite."""
    fields = [f.strip() for item in allow for f in item.split(",") if f.strip()]
    if latest is not None:
        if len(runs) != 1:
            raise UsageError(f"--latest {latest} takes one LABEL, not {len(runs)} argument(s)")
        comparison = compare_records(latest_runs(runs_dir, runs[0], latest), baseline, fields, group_by=group_by)
    else:
        comparison = compare_files(list(runs), baseline, fields, group_by)
    click.echo(render_comparison(comparison, templates=templates), nl=False)
    if json_path:
        write_json(json_path, comparison)
    if html_path:
        write_text(html_path, render_comparison(comparison, "compare.html.j2", templates))
    worse = regressions(comparison)
    if fail_on_regression and worse:
        raise GateFailed(f"{len(worse)} regression(s): {'; '.join(worse)}")
    return Outcome.OK
