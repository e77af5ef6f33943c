"""Waiting on worker threads without going deaf to Ctrl-C.

A signal sent to the process may be handed by the kernel to any of its threads; Python acts on it
only when the main thread next runs. A main thread blocked on a future (``as_completed``,
``Executor.map``) can then sleep through Ctrl-C until a worker finishes, which may be a minute
(a sweep cell settling) or an HTTP timeout. These helpers wait in steps of :data:`WAKE_S`.

Raising KeyboardInterrupt from a signal handler is not safe either: it lands wherever the main
thread is, which may be inside ``concurrent.futures.wait`` between taking two futures' locks,
which are then never released and the worker finishing one of them waits forever. Within
:func:`deferred_interrupts` the signals only set a flag, and :func:`completed` raises
KeyboardInterrupt between its waits.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from types import FrameType
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

WAKE_S = 0.2

_requested = threading.Event()


@contextlib.contextmanager
def handling(signals: Iterable[signal.Signals], handler: Callable[[int, FrameType | None], None]) -> Iterator[None]:
    """Within the block, ``handler`` handles ``signals``; the previous handlers come back after.
    Outside the main thread (where Python cannot set handlers), nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, handler) for sig in signals}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextlib.contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM only ask :func:`completed` to raise KeyboardInterrupt
    at its next step (see the module docstring)."""
    _requested.clear()
    try:
        with handling((signal.SIGINT, signal.SIGTERM), lambda signum, frame: _requested.set()):
            yield
    finally:
        _requested.clear()


def completed(futures: Iterable[Future[R]]) -> Iterator[Future[R]]:
    """Each of ``futures`` once it is done, in the order they finish (as ``as_completed``);
    raises KeyboardInterrupt at a step after a signal within :func:`deferred_interrupts`."""
    pending = set(futures)
    while pending:
        finished, pending = wait(pending, timeout=WAKE_S, return_when=FIRST_COMPLETED)
        if _requested.is_set():
            raise KeyboardInterrupt
        yield from finished


def gather(pool: Executor, fn: Callable[[T], R], values: Iterable[T]) -> list[R]:
    """``fn`` over ``values`` on ``pool``, results in input order (as ``pool.map``); on an
    exception, the first in input order is raised and the calls not yet started are cancelled.
    """
    futures = [pool.submit(fn, value) for value in values]
    try:
        for _ in completed(futures):
            pass
        return [future.result() for future in futures]
    finally:
        for future in futures:
            future.cancel()
