"""The options ``run`` and ``sweep`` share for where their units run: --executor, --scheduler,
--workers and --shard (see :mod:`memeval.runner.executor`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

from memeval.runner.executor import EXECUTORS

F = TypeVar("F", bound=Callable[..., object])


def executor_options(units: str, order: str) -> Callable[[F], F]:
    """The four options, their help naming the ``units`` (scenarios, cells) and the ``order`` a
    shard slices them in."""
    options = [
        click.option("--executor", type=click.Choice(EXECUTORS), default="local", show_default=True,
                     help=f"Where the {units} run: here, or on Dask (pip install 'memeval-harness[dask]')."),
        click.option("--scheduler", default=None, metavar="ADDRESS",
                     help="The Dask scheduler (tcp://host:8786) [default: a local cluster]."),
        click.option("--workers", type=click.IntRange(1, 64), default=None,
                     help="Workers of the local Dask cluster [default: 2]."),
        click.option("--shard", default=None, metavar="I/N",
                     help=f"Run slice I of N: the {units} sorted by {order}, every N-th from the I-th."),
    ]

    def apply(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command

    return apply
