"""``memeval view [DIR]``: browse the runs under DIR (default ``runs/``) in a local web app
(:mod:`memeval.viewer`)."""

from __future__ import annotations

import click

from memeval.errors import Outcome


@click.command("view")
@click.argument("folder", default="runs", type=click.Path(file_okay=False))
@click.option("--port", default=0, show_default=True, type=click.IntRange(0, 65535),
              help="The port to listen on (0: a free one, printed).")
@click.option("--listen-all-interfaces", is_flag=True,
              help="Listen on every network interface instead of 127.0.0.1 only (anyone who reaches this machine "
                   "can then read the runs).")
@click.option("--open", "open_browser", is_flag=True, help="Open the address in a browser (where one can be shown).")
def command(folder: str, port: int, listen_all_interfaces: bool, open_browser: bool) -> Outcome:
    """Browse, compare and rank the runs in FOLDER (default runs/) in a local web app."""
    from memeval.viewer.app import make, serve

    serve(make(folder, port, listen_all_interfaces), click.echo, open_browser)
    return Outcome.OK
