"""Fixtures for the answerer tests: the mock inference server as a real process on 127.0.0.1,
and run records produced by real ``memeval run`` processes on tests/fixtures/mini.yaml."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memeval.record import RunRecord
from memeval.report.files import read_run
from memeval.llm.settings import LlmSettings, resolve
from memeval.servers.launch import RunningServer, start_server
from tests.conftest import FIXTURES, MEMEVAL

MINI = os.path.join(FIXTURES, "mini.yaml")
SECRET = "sk-planted-SECRET-123"


class Mock:
    """The mock inference server plus its control routes."""

    def __init__(self, server: RunningServer):
        self.server = server
        self.url = server.url + "/v1"
        self.http = httpx.Client(base_url=server.url, timeout=10)

    def fail(self, status: int, count: int = 1, retry_after: float | None = None) -> None:
        rule: dict[str, Any] = {"status": status, "count": count, "route": "chat"}
        if retry_after is not None:
            rule["retry_after"] = retry_after
        assert self.http.post("/_mock/faults", json={"fail": [rule]}).status_code == 200

    def slow(self, seconds: float) -> None:
        assert self.http.post("/_mock/faults", json={"latency": seconds}).status_code == 200

    def chat_calls(self) -> int:
        """Chat requests received since the test began (failed ones included)."""
        return self.http.get("/_mock/stats").json()["calls"]["chat"]

    def reset(self) -> None:
        self.http.post("/_mock/faults", json={"clear": True})
        self.http.delete("/_mock/stats")


@pytest.fixture(scope="session")
def mock_server() -> Iterator[Mock]:
    with start_server("mock_inference") as server:
        mock = Mock(server)
        yield mock
        mock.http.close()


@pytest.fixture
def mock(mock_server: Mock) -> Iterator[Mock]:
    mock_server.reset()
    yield mock_server
    mock_server.reset()


def memeval(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the memeval command line as a real process."""
    return subprocess.run([*MEMEVAL, *args], capture_output=True, text=True, env={**os.environ, **(env or {})},
                          timeout=120)


@pytest.fixture(scope="session")
def mini_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """run.json of ``memeval run tests/fixtures/mini.yaml`` on the reference engine, no --llm."""
    out = tmp_path_factory.mktemp("mini")
    proc = memeval("run", MINI, "--out", str(out), "--quiet", env={"HOME": str(out)})
    assert proc.returncode == 0, proc.stderr
    return out / "run.json"


@pytest.fixture
def record(mini_run: Path) -> RunRecord:
    """The mini run record."""
    return read_run(str(mini_run))


@pytest.fixture
def settings(mock: Mock, tmp_path: Path):
    """A factory of answerer settings pointed at the mock, caching under this test's folder."""

    def make(block: dict[str, Any] | None = None, *, judge: bool = False, cache: bool = True, salt: str = "",
             key: str = "") -> LlmSettings:
        env = {"EVAL_LLM_URL": mock.url, "MEMEVAL_CACHE_DIR": str(tmp_path / "cache"), "EVAL_LLM_KEY": key}
        return resolve(block or {}, env, judge=judge, cache=cache, salt=salt)

    return make
