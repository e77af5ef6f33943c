"""Helpers for the loopback server tests: an httpx client on a fake CortexDB process, polling."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from memeval.servers.launch import RunningServer, start_server

CORTEX_KEY = "tinymemory-cortex-test"
HOSTED_KEY = "tiny_live_test"
FAST = ["--index-delay", "0.2", "--enrich-delay", "0.02", "--pack-ttl", "0.6", "--wait-cap", "0.5"]


def _eventually(check: Callable[[], Any], timeout: float = 3.0, every: float = 0.03) -> Any:
    """Poll ``check`` until it returns something truthy; that value. Fails the test on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {timeout}s")
        time.sleep(every)


def _experience(scope: str, text: str, labels: list[str] | None = None, key: str | None = None) -> dict[str, Any]:
    """A conversation-turn experience body."""
    body: dict[str, Any] = {
        "scope": scope,
        "modality": "conversation",
        "content": {"kind": "message", "role": "user", "text": text},
        "context": {"labels": labels or []},
    }
    if key:
        body["idempotency_key"] = key
    return body


class Cortex:
    """An authenticated httpx client on one fake CortexDB process, with small helpers."""

    def __init__(self, server: RunningServer, key: str = CORTEX_KEY):
        self.server = server
        self.url = server.url
        self.http = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=10)

    eventually = staticmethod(_eventually)
    body = staticmethod(_experience)

    def get(self, path: str, **params: Any) -> httpx.Response:
        return self.http.get(path, params=params)

    def post(self, path: str, body: Any, **kwargs: Any) -> httpx.Response:
        return self.http.post(path, json=body, **kwargs)

    def write(self, scope: str, text: str, labels: list[str] | None = None, key: str | None = None) -> str:
        """Append one event; its id (asserts 202)."""
        reply = self.post("/v1/experience", _experience(scope, text, labels, key))
        assert reply.status_code == 202, reply.text
        return reply.json()["event_id"]

    def listed_ids(self, scope: str, **params: Any) -> list[str]:
        """Ids on the first listing page (copies included), newest first."""
        reply = self.get("/v1/events", scope=scope, limit=200, **params)
        assert reply.status_code == 200, reply.text
        return [item["id"] for item in reply.json()["items"]]

    def wait_listed(self, scope: str, event_id: str) -> None:
        _eventually(lambda: event_id in self.listed_ids(scope))

    def faults(self, **body: Any) -> dict[str, Any]:
        return self.server.faults(**body)

    def close(self) -> None:
        self.http.close()


def cortex_process(args: list[str], env: dict[str, str] | None = None) -> Iterator[Cortex]:
    """Start a fake CortexDB for a fixture; stop it afterwards."""
    with start_server("fake_cortex", args, env) as server:
        client = Cortex(server, HOSTED_KEY if "--hosted" in args else CORTEX_KEY)
        yield client
        client.close()
