"""The two waits of a run: settle (every write listed) and the enrichment drain."""

from __future__ import annotations

import time
from typing import Callable, TypedDict

from memeval.engines.base import Engine, HasBacklog
from memeval.errors import SettleTimeout

DRAIN_FIRST_POLL_S = 0.05


def listed(engine: Engine, tenant: str, wanted: set[str]) -> set[str]:
    """Which of ``wanted`` ids are listed in ``tenant`` now (pages through the listing, stopping
    once all are found)."""
    seen: set[str] = set()
    cursor = None
    for _ in range(10_000):
        page = engine.page(tenant, cursor, 100)
        seen.update(i.id for i in page.items if i.id in wanted)
        cursor = page.cursor
        if cursor is None or len(seen) == len(wanted):
            break
    return seen


def settle(engine: Engine, written: dict[str, set[str]], timeout_s: float, poll_s: float,
           sleep: Callable[[float], None] = time.sleep) -> None:
    """Wait until every written id is listed in its tenant; each poll looks only for the ids not
    seen yet.

    Raises:
        SettleTimeout: "only N of M writes visible after T s" when time runs out.
    """
    deadline = time.monotonic() + timeout_s
    missing = {t: set(ids) for t, ids in written.items() if ids}
    total = sum(len(ids) for ids in missing.values())
    while True:
        for tenant in list(missing):
            missing[tenant] -= listed(engine, tenant, missing[tenant])
            if not missing[tenant]:
                del missing[tenant]
        if not missing:
            return
        if time.monotonic() >= deadline:
            shown = total - sum(len(ids) for ids in missing.values())
            raise SettleTimeout(f"only {shown} of {total} writes visible after {timeout_s:g} s")
        sleep(poll_s)


class Drained(TypedDict):
    """What a drain found: whether the backlog emptied, how often it was read, and the jobs
    still queued at the last reading."""

    drained: bool
    polls: int
    pending: int


def drain(engine: HasBacklog, cap_s: float, poll_s: float,
          sleep: Callable[[float], None] = time.sleep) -> Drained:
    """Wait until the engine's enrichment backlog is empty, at most ``cap_s`` seconds; polls
    after 0.05 s, then twice as long each time up to ``poll_s``. Returns what happened:
    ``{"drained": bool, "polls": n, "pending": last}``.

    The first empty reading ends the wait: a backlog counts each accepted write's job until the
    job is finished (CortexDB's ``jobs_pending``), and the drain runs after every write settled,
    so an empty queue has nothing left to come."""
    deadline = time.monotonic() + cap_s
    polls, pause = 0, min(DRAIN_FIRST_POLL_S, poll_s)
    while True:
        pending = engine.backlog()
        polls += 1
        if pending == 0:
            return {"drained": True, "polls": polls, "pending": 0}
        if time.monotonic() + pause > deadline:
            return {"drained": False, "polls": polls, "pending": pending}
        sleep(pause)
        pause = min(2 * pause, poll_s)
