"""Starting the viewer: index the folder, bind, announce the address, serve until a signal.

The server binds 127.0.0.1 unless ``listen_all`` asks for every interface on purpose; it opens
no browser unless asked, and then only where one can be shown (not on a headless Linux machine).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import webbrowser
from collections.abc import Callable
from types import FrameType

from memeval.errors import EngineError
from memeval.util.interruptible import handling
from memeval.viewer.server import ViewerServer


def can_show_browser() -> bool:
    """Whether a browser window could appear: not on Linux without a display."""
    return not sys.platform.startswith("linux") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def make(root: str, port: int, listen_all: bool) -> ViewerServer:
    """The viewer's server over ``root``, bound and indexed.

    Raises:
        UsageError: ``root`` is not a folder, or its index cannot be opened.
        EngineError: the address cannot be bound.
    """
    host = "0.0.0.0" if listen_all else "127.0.0.1"
    try:
        return ViewerServer(root, host, port)
    except OSError as err:
        raise EngineError(f"view: cannot listen on {host}:{port}: {err.strerror or err}") from None


def serve(server: ViewerServer, echo: Callable[[str], None], open_browser: bool = False) -> None:
    """Index the folder, print the address (and what was indexed), read the newest runs into the
    record cache in the background, serve until SIGTERM/SIGINT."""
    start = time.perf_counter()
    read = server.index.refresh()
    runs = len(server.index.runs(()))
    echo(f"indexed {runs} run(s) under {server.index.root} ({read} run.json read, {time.perf_counter() - start:.1f} s)")
    if server.server_address[0] == "0.0.0.0":
        echo("warning: listening on every interface: anyone who can reach this machine can read these runs")
    echo(f"memeval view listening on {server.url} (Ctrl-C stops it)")
    threading.Thread(target=server.viewer.warm, name="memeval-view-warm", daemon=True).start()
    def on_signal(signum: int, frame: FrameType | None) -> None:
        # shutdown() waits for serve_forever() to return, so it must not run on the serving thread
        threading.Thread(target=server.shutdown, name="memeval-view-stop", daemon=True).start()

    try:
        with handling((signal.SIGTERM, signal.SIGINT), on_signal):
            if open_browser and can_show_browser():
                webbrowser.open(server.url)
            elif open_browser:
                echo("no display here: open the address above in a browser")
            server.serve_forever()
    finally:
        server.server_close()
