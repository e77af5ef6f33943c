"""The ``memeval`` command line: one click command per module, no logic here.

Every command returns an :class:`~memeval.errors.Outcome` (or None for ok) or raises; :func:`main`
is the one place where either becomes an exit code, through :func:`memeval.errors.exit_code`.

A command's module is imported only when that command runs (or when ``--help`` lists them all),
so ``memeval run`` never loads the fake servers, the dataset importers or the sweep.
"""

from __future__ import annotations

import atexit
import functools
import gc
import importlib
import sys

import click

from memeval import __version__
from memeval.errors import MemevalError, Outcome, SpecError, exit_code, outcome_of
from memeval.secrets import mask

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
    "import_", "generate",  # published benchmarks and synthetic haystacks (memeval.datasets)
    "check_engine",
    "power",
    "merge",  # --shard runs joined (memeval.runner.merge)
    "view",  # the local web app over a runs folder (memeval.viewer)
    "new",  # scaffolds (memeval.scaffold)
    "ls",  # the runs under a folder (memeval.report.runs_index)
)




class LazyGroup(click.Group):
    """A group whose commands are the ``command`` attributes of the modules in :data:`COMMANDS`,
    each imported on first use. A command is named after its module (``import_`` is ``import``,
    ``check_engine`` is ``check-engine``)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_NAMES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = _NAMES.get(cmd_name)
        if module is None:
            return None
        command: click.Command = importlib.import_module(f"memeval.cli.{module}").command
        return command


_NAMES = {name.rstrip("_").replace("_", "-"): name for name in COMMANDS}


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="memeval")
def cli() -> None:
    """Evaluate AI-agent memory from declarative YAML specs."""


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run the CLI and exit with the code of how it ended."""
    _quick_exit()
    sys.exit(exit_code(_outcome(argv)))


@functools.cache
def _quick_exit() -> None:
    """At exit, freeze what is still alive for the garbage collector, so that the interpreter's
    last collection does not walk every object of the run (a tenth of a second after a suite
    run). Reference counting still frees what it can as modules are cleared; objects in cycles are
    left for the operating system to reclaim with the process."""
    atexit.register(gc.freeze)


def _outcome(argv: list[str] | None) -> Outcome:
    try:
        result = cli.main(args=argv, standalone_mode=False)
    except click.ClickException as err:  # click's own usage errors (exit 2 in click, too)
        err.show()
        return Outcome.USAGE
    except SpecError as err:
        click.echo(str(err), err=True)
        click.echo(f"{len(err.issues)} error(s); nothing was run.", err=True)
        return outcome_of(err)
    except MemevalError as err:
        click.echo(mask(f"error: {err}"), err=True)
        return outcome_of(err)
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("interrupted", err=True)
        return Outcome.INTERRUPTED
    # None: a command with nothing to report; 0: click's --help and --version
    return result if isinstance(result, Outcome) else Outcome.OK
