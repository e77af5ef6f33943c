"""Fixtures of the reliability tests: one fake CortexDB process per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memeval.servers.launch import RunningServer
from tests.reliability.support import start_fake


@pytest.fixture(scope="module")
def fake() -> Iterator[RunningServer]:
    """The module's fake CortexDB (fast indexing, key ``KEY``); a module may override it."""
    with start_fake() as running:
        yield running


@pytest.fixture
def cortex(fake: RunningServer) -> Iterator[RunningServer]:
    """The module's fake with every fault cleared before and after the test."""
    fake.faults(clear=True)
    yield fake
    fake.faults(clear=True)
