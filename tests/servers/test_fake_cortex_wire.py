"""The fake CortexDB's recall wires: 0.10 (the default) refuses the newer ``diagnostics`` field
as CortexDB v0.10 does; 0.12 (``--wire 0.12``) accepts it and renders a ``context_block``."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from procs import FAST, Cortex, cortex_process

pytestmark = pytest.mark.slow  # every test here starts a process or uses one a fixture started


@pytest.fixture(scope="module")
def newer() -> Iterator[Cortex]:
    yield from cortex_process([*FAST, "--wire", "0.12"])


def recall(cortex: Cortex, scope: str, **extra: object) -> dict[str, object]:
    answer = cortex.post("/v1/recall", {"scope": scope, "query": "zircon badge", **extra})
    assert answer.status_code == 200, answer.text
    body: dict[str, object] = answer.json()
    return body


def test_the_default_wire_refuses_diagnostics_as_v0_10_does(cortex: Cortex, scope: str) -> None:
    answer = cortex.post("/v1/recall", {"scope": scope, "query": "zircon", "diagnostics": "none"})
    assert answer.status_code == 422
    assert answer.json()["message"] == "unknown recall field(s) diagnostics"
    assert "context_block" not in recall(cortex, scope)
    assert cortex.get("/v1/admin/version").json()["wire"] == "0.10"


def test_the_newer_wire_takes_diagnostics_and_renders_the_pack(newer: Cortex, scope: str) -> None:
    dated = newer.body(scope, "The zircon badge opens the north door.")
    dated["context"]["observed_at"] = "2026-09-01T09:05:00Z"
    newer.wait_listed(scope, newer.post("/v1/experience", dated).json()["event_id"])
    newer.wait_listed(scope, newer.write(scope, "An undated zircon note."))
    block = str(recall(newer, scope, diagnostics="none")["context_block"])
    assert block.split("\n---\n") == ["[2026-09-01 09:05 UTC] [user] The zircon badge opens the north door.",
                                       "[user] An undated zircon note."]
    assert newer.get("/v1/admin/version").json()["wire"] == "0.12"
    refused = newer.post("/v1/recall", {"scope": scope, "query": "zircon", "diagnostics": "everything"})
    assert refused.status_code == 422 and "diagnostics must be one of" in refused.json()["message"]


def test_an_unknown_wire_is_a_usage_error() -> None:
    done = subprocess.run([sys.executable, "-m", "memeval.servers.fake_cortex", "--wire", "0.9"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "wire" in done.stderr
