"""Waiting on worker threads without going deaf to Ctrl-C.

A signal sent to the process may be handed by the kernel to any of its threads; Python acts on it
only when the main thread next runs. A main thread blocked on a future (``as_completed``,
``Executor.map``) can then sleep through Ctrl-C until a worker finishes, which may be a minute
(a sweep cell settling) or an HTTP timeout. These helpers wait in steps of :data:`WAKE_S`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

WAKE_S = 0.2


def completed(futures: Iterable[Future[R]]) -> Iterator[Future[R]]:
    """Each of ``futures`` once it is done, in the order they finish (as ``as_completed``)."""
    pending = set(futures)
    while pending:
        finished, pending = wait(pending, timeout=WAKE_S, return_when=FIRST_COMPLETED)
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
