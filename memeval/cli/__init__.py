"""The ``memeval`` command line: one click command per module, no logic here.

This is the one place where errors become exit codes (see :mod:`memeval.errors`).
"""

from __future__ import annotations

import importlib
import sys

import click

from memeval import __version__
from memeval.errors import EXIT_INTERRUPTED, MemevalError, SpecError

# module name under memeval.cli -> attribute holding the click command
COMMANDS = (
    "run",
    "validate",
    "plan",
    "schema",
    "serve",
    "compare",
    "sweep",
    "regrade",
    "power",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="memeval")
def cli() -> None:
    """Evaluate AI-agent memory from declarative YAML specs."""


for _name in COMMANDS:
    cli.add_command(importlib.import_module(f"memeval.cli.{_name}").command)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run the CLI and map every error to its exit code."""
    try:
        code = cli.main(args=argv, standalone_mode=False)
    except click.ClickException as err:
        err.show()
        sys.exit(err.exit_code)
    except SpecError as err:
        click.echo(str(err), err=True)
        click.echo(f"{len(err.issues)} error(s); nothing was run.", err=True)
        sys.exit(err.exit_code)
    except MemevalError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(err.exit_code)
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    sys.exit(code if isinstance(code, int) else 0)
