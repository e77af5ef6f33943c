"""``memeval check-engine NAME|FILE``: run the conformance kit against one engine."""

from __future__ import annotations

import click

from memeval.engines.conformance import DEFAULT_SETTLE_S, run_checks
from memeval.spec.engine_def import resolve_engine, with_command
from memeval.engines.server import engine_server
from memeval.errors import GateFailed


@click.command("check-engine")
@click.argument("engine")
@click.option("--settle-s", type=click.FloatRange(min=0), default=DEFAULT_SETTLE_S, show_default=True,
              help="How long a write may take to be listed.")
@click.option("--server", "server_cmd", metavar="CMD",
              help="The command that starts the engine's server (e.g. an MCP server over stdio: "
                   "check-engine mcp --server 'memeval serve mcp'); for adapters that start one themselves.")
def command(engine: str, settle_s: float, server_cmd: str | None) -> None:
    """Check that ENGINE (a definition name as --engine takes it, or its YAML file) keeps every
    engine contract: one PASS / FAIL / SKIP line per contract. Exit 0 when all pass, 1 when a
    contract fails, 3 when the engine is unreachable.

    A definition with a server: block has its server started for the check, as memeval run does.
    A failed contract raises GateFailed (exit 1) once every contract has been printed.
    """
    engine_def = with_command(resolve_engine(engine), server_cmd)
    with engine_server(engine_def) as overrides:
        built = engine_def.create(overrides)
        try:
            click.echo(f"check-engine {engine_def.name} (adapter {engine_def.adapter})")
            results = run_checks(built, settle_s, lambda result: click.echo(result.line()))
        finally:
            built.close()
    counts = {status: sum(r.status == status for r in results) for status in ("pass", "fail", "skip")}
    click.echo(f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped")
    if counts["fail"]:
        raise GateFailed(f"{counts['fail']} of {len(results)} engine contracts failed")
