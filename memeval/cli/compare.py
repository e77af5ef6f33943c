"""``memeval compare RUN.json…``: configurations against a baseline, moves beyond noise only."""

from __future__ import annotations

import click

from memeval.comparison import compare_files, regressions, render_comparison
from memeval.comparison.groups import GROUP_BY
from memeval.errors import GateFailed, Outcome
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
def command(runs: tuple[str, ...], baseline: str | None, json_path: str | None, html_path: str | None,
            fail_on_regression: bool, templates: str | None, allow: tuple[str, ...], group_by: str) -> Outcome:
    """Compare RUN.json files, each its own column (repeats averaged), judged against a baseline.
    Runs scored under different setups (judge, prompts, suite, pack policy, …) are refused
    unless the differences are named with --allow-setup-diff; runs of different suites only
    with --allow-setup-diff suite."""
    fields = [f.strip() for item in allow for f in item.split(",") if f.strip()]
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
