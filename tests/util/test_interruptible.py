"""Waiting on worker threads in short steps: the same results as ``as_completed`` and ``map``,
and a signal turned into KeyboardInterrupt only between those steps."""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from memeval.util.interruptible import WAKE_S, completed, deferred_interrupts, gather


def test_gather_keeps_input_order_whatever_order_the_calls_finish_in():
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert gather(pool, lambda n: time.sleep(0.05 * (4 - n)) or n * n, range(4)) == [0, 1, 4, 9]


def test_gather_raises_the_first_failure_in_input_order_as_map_does():
    started = []
    gate = threading.Event()

    def call(n: int) -> int:
        started.append(n)
        if n == 0:
            gate.wait(5)
            raise ValueError("first")
        if n == 1:
            gate.set()
            raise KeyError("second")
        return n

    with ThreadPoolExecutor(max_workers=2) as pool, pytest.raises(ValueError, match="first"):
        gather(pool, call, range(2))
    assert sorted(started) == [0, 1]


def test_completed_yields_every_future_once_even_when_each_takes_longer_than_a_step():
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(time.sleep, 2.5 * WAKE_S) for _ in range(3)]
        assert sorted(map(id, completed(futures))) == sorted(map(id, futures))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_deferred_signal_stops_the_wait_at_its_next_step_and_the_handlers_come_back(sig):
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    release = threading.Event()
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(release.wait, 30)
        with deferred_interrupts():
            os.kill(os.getpid(), sig)
            delivered = True  # the handler ran before this line and raised nothing
            with pytest.raises(KeyboardInterrupt):
                for _ in completed([future]):
                    pass
        assert delivered
        assert not future.done()  # the worker was not waited for
        release.set()
    assert {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)} == before
