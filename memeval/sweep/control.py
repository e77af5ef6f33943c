"""What the scheduler and the running cells share: the stop flag and the live run processes."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from typing import IO
from collections.abc import Mapping


class Control:
    """Stopping a sweep: after :meth:`stop`, no new run process starts and every live one is
    terminated, so each cell leaves its ``with`` block and tears its server down."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: set[subprocess.Popen[bytes]] = set()
        self.stopping = threading.Event()

    def spawn(self, argv: list[str], env: Mapping[str, str], log: IO[str]) -> subprocess.Popen[bytes] | None:
        """Start a run process (its own session, output to ``log``); None once stopping.

        Raises:
            OSError: the process cannot start.
        """
        with self._lock:
            if self.stopping.is_set():
                return None
            process = subprocess.Popen(argv, env=dict(env), stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
            self._live.add(process)
            return process

    def finished(self, process: subprocess.Popen[bytes]) -> None:
        """Forget a process that has been waited for."""
        with self._lock:
            self._live.discard(process)

    def stop(self) -> None:
        """Set the stop flag and terminate every live run process (SIGTERM to its group)."""
        with self._lock:
            self.stopping.set()
            for process in self._live:
                if process.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(process.pid, signal.SIGTERM)
