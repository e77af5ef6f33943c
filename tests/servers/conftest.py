"""Fixtures for the loopback server tests: real processes on 127.0.0.1, shared per module."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from procs import FAST, Cortex, cortex_process


@pytest.fixture(scope="module")
def cortex() -> Iterator[Cortex]:
    """The shared fake CortexDB (default flags, fast timings)."""
    yield from cortex_process(FAST)


@pytest.fixture(scope="module")
def restricted() -> Iterator[Cortex]:
    """Bitemporal mode off, enrichment quiet for 800 ms, no ``refers_to_v1`` capability."""
    env = {"CORTEX_BITEMPORAL_MODE": "off", "CORTEX_ENTITY_GRAPH": "0", "CORTEX_ENRICHMENT_SCOPE_QUIET_MS": "800"}
    yield from cortex_process([*FAST, "--capabilities", "temporal_lenient_v1"], env)


@pytest.fixture(scope="module")
def enforcing() -> Iterator[Cortex]:
    """Bitemporal mode enforce and a high salience weight."""
    yield from cortex_process(FAST, {"CORTEX_BITEMPORAL_MODE": "enforce", "CORTEX_SALIENCE_WEIGHT": "0.3"})


@pytest.fixture(scope="module")
def hosted() -> Iterator[Cortex]:
    """The hosted TinyHumans shape."""
    yield from cortex_process([*FAST, "--hosted"])


@pytest.fixture
def scope() -> str:
    """A fresh scope per test, so tests sharing a server never see each other's events."""
    return f"app:t{uuid.uuid4().hex[:10]}/agent:a"
