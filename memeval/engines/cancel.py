"""Process-wide cancellation of engine requests: a Ctrl-C stops every request in flight, in
every HTTP client, and bounds the cleanup that follows. Kept apart from the HTTP client so
that a run which talks to no server (and imports no HTTP library) can still arm it."""

from __future__ import annotations

import time

GRACE_S = 2.0
"""After a Ctrl-C, how long the requests that follow (the cleanup) may take in all."""


class Cancel:
    """Process-wide cancellation: a Ctrl-C stops every request in flight, in every client."""

    def __init__(self) -> None:
        self.generation = 0
        self.until: float | None = None

    def deadline(self, own: float) -> float:
        return own if self.until is None else min(own, self.until)


CANCEL = Cancel()


def cancel_requests(grace_s: float = GRACE_S) -> None:
    """Stop waiting for every request in flight (they fail as cancelled) and give later requests
    ``grace_s`` seconds in all. Safe to call from a signal handler; later calls keep the first grace."""
    CANCEL.generation += 1
    if CANCEL.until is None:
        CANCEL.until = time.monotonic() + grace_s


def reset_cancel() -> None:
    """Forget an earlier :func:`cancel_requests` (a process that runs on after an interrupt)."""
    CANCEL.until = None
