"""The conformance kit: every built-in adapter passes it, broken adapters and broken servers fail
it with the contract they break, and ``memeval check-engine`` exits 0, 1 or 3."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memeval.engines.base import Capability, EngineInfo, Hit, ListPage, RecallRequest, capabilities_of
from memeval.engines.conformance import CONTRACTS, Result, Unreachable, run_checks
from memeval.engines.cortex.adapter import CortexEngine
from memeval.engines.cortex.adapter import create as create_cortex
from memeval.engines.reference.engine import ReferenceEngine
from memeval.engines.server import free_port
from memeval.engines.cortex.tinyhumans import create as tinyhumans
from memeval.errors import EngineError
from memeval.servers.launch import RunningServer
from tests.engines.conftest import HOSTED_KEY, QUICK

ROOT = Path(__file__).resolve().parents[2]


def failed(results: list[Result]) -> dict[str, str]:
    return {r.contract: r.reason for r in results if r.status == "fail"}


@pytest.mark.slow
def test_cortex_against_the_fake_keeps_every_contract(cortex_engine: CortexEngine) -> None:
    results = run_checks(cortex_engine)
    assert failed(results) == {}
    assert [r.contract for r in results] == [c.name for c in CONTRACTS]
    assert all(r.status == "pass" for r in results)


@pytest.mark.slow
def test_tinyhumans_against_the_hosted_fake_keeps_every_contract(hosted: RunningServer,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TINYHUMANS_API_KEY", HOSTED_KEY)
    engine = tinyhumans({"url": hosted.url, "requests_per_minute": 0, **QUICK})
    results = run_checks(engine)
    engine.close()
    assert failed(results) == {}
    assert all(r.status == "pass" for r in results)


@pytest.mark.slow
def test_a_server_that_never_lists_fails_visibility_with_a_clear_line(cortex_engine: CortexEngine,
                                                                      cortex: RunningServer) -> None:
    cortex.faults(hide_listings=True)
    results = run_checks(cortex_engine, settle_s=0.3)
    by_name = {r.contract: r for r in results}
    assert by_name["write visible after settle"].line() == \
        "FAIL  write visible after settle: 0 of 1 writes listed after 0.3 s"


@pytest.mark.slow
def test_a_server_whose_forget_fails_fails_only_the_contracts_that_forget(cortex_engine: CortexEngine,
                                                                          cortex: RunningServer) -> None:
    cortex.faults(fail=[{"route": "v1/forget", "status": 500, "count": 1000}])
    broken = failed(run_checks(cortex_engine))
    assert list(broken) == ["forget removes from recall and listing"]
    assert broken["forget removes from recall and listing"].startswith("engine error: cortex POST v1/forget: 500")


def test_an_unreachable_server_is_unreachable_not_a_failed_contract() -> None:
    engine = create_cortex({"url": f"http://127.0.0.1:{free_port()}", **QUICK})
    with pytest.raises(Unreachable, match="^engine unreachable: "):
        run_checks(engine)


class IgnoresLimit(ReferenceEngine):
    def recall(self, request: RecallRequest) -> list[Hit]:
        return super().recall(RecallRequest(request.tenant, request.nodes, request.query, 100))


class LeaksTenants(ReferenceEngine):
    def recall(self, request: RecallRequest) -> list[Hit]:
        hits: list[Hit] = []
        for tenant in list(self._tenants):
            hits += super().recall(RecallRequest(tenant, request.nodes, request.query, request.limit))
        return hits[:request.limit]


class ForgetsNothing(ReferenceEngine):
    def forget(self, tenant: str, ids: tuple[str, ...]) -> int:
        return len(ids)


class SwallowsErrors(ReferenceEngine):
    def page(self, tenant: str, cursor: str | None = None, limit: int = 100) -> ListPage:
        try:
            return super().page(tenant, cursor, limit)
        except EngineError:
            return ListPage(())


class ClaimsToAnswer(ReferenceEngine):
    def info(self) -> EngineInfo:
        info = super().info()
        return EngineInfo(info.name, info.version, info.capabilities | {Capability.ANSWER}, settings=info.settings)


class RepeatsPages(ReferenceEngine):
    def page(self, tenant: str, cursor: str | None = None, limit: int = 100) -> ListPage:
        got = super().page(tenant, cursor, limit)
        return ListPage(got.items + got.items[:1], got.cursor) if len(got.items) < limit else got


@pytest.mark.parametrize(("adapter", "contract", "reason"), [
    (IgnoresLimit, "recall honours limit", "recall with limit 1 returned 6 hits"),
    (LeaksTenants, "tenants never see each other", "sees items of"),
    (ForgetsNothing, "forget removes from recall and listing", "a forgotten item is still listed"),
    (SwallowsErrors, "failures are engine errors", "never handed out gave a page of 0, not an EngineError"),
    (ClaimsToAnswer, "declared capabilities work, undeclared refused", "declares ['answer'] it does not implement"),
    (RepeatsPages, "paging returns each item once", "listed 8 items for 7 written (1 twice)"),
])
def test_a_broken_adapter_fails_the_contract_it_breaks(adapter: type[ReferenceEngine], contract: str,
                                                        reason: str) -> None:
    broken = failed(run_checks(adapter(None, 0.45), settle_s=0.2))
    assert contract in broken and reason in broken[contract]
    if adapter is not ClaimsToAnswer:
        assert capabilities_of(adapter(None, 0.45)) == frozenset(
            {Capability.FORGET, Capability.ERASE, Capability.BELIEFS, Capability.INSPECT})


def check_engine(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from memeval.cli import main; main()", "check-engine", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=120, check=False)


@pytest.mark.slow
def test_check_engine_on_the_fake_cortex_definition_passes() -> None:
    done = check_engine("fake-cortex")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == "check-engine fake-cortex (adapter cortex)"
    assert done.stdout.count("PASS  ") == len(CONTRACTS)
    assert done.stdout.splitlines()[-1] == f"{len(CONTRACTS)} passed, 0 failed, 0 skipped"


@pytest.mark.slow
def test_check_engine_names_the_contract_a_faulted_server_breaks_and_exits_1(tmp_path: Path) -> None:
    definition = tmp_path / "broken-cortex.yaml"
    definition.write_text(
        "engine: broken-cortex\nadapter: cortex\nsettings: {retry_base_s: 0.01}\nserver:\n"
        '  start: ["{python}", "-m", "memeval.servers.fake_cortex", "--port", "{port}", "--fail", "v1/recall:503:1000"]\n'
        "  ready: /v1/admin/ready\n  url: http://127.0.0.1:{port}\n", encoding="utf-8")
    done = check_engine(str(definition), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "FAIL  recall honours limit: engine error: cortex POST v1/recall: 503" in "\n".join(lines)
    assert "PASS  paging returns each item once" in lines
    assert lines[-1].endswith("failed, 0 skipped") and " 0 failed" not in lines[-1]
    assert done.stderr.splitlines()[-1].startswith("error: ") and "engine contracts failed" in done.stderr


@pytest.mark.slow
def test_check_engine_on_an_unreachable_server_exits_3(tmp_path: Path) -> None:
    definition = tmp_path / "gone.yaml"
    definition.write_text(f"engine: gone\nadapter: cortex\nsettings: {{url: 'http://127.0.0.1:{free_port()}', "
                          "retry_base_s: 0.01}\n", encoding="utf-8")
    done = check_engine(str(definition), cwd=tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stderr.splitlines()[-1].startswith("error: engine unreachable: cortex GET ")
    assert "Connection refused" in done.stderr.splitlines()[-1] and "PASS" not in done.stdout
