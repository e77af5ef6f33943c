"""What plan says of an MCP engine, the trust rule for a definition that starts an MCP server,
check-engine's --server, and ``memeval serve mcp``'s usage errors."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from memeval.spec import engine_def
from memeval.spec.engine_def import describe_engine, resolve_engine, with_command
from memeval.errors import UsageError
from tests.conftest import MEMEVAL, ROOT, cli

MINI = Path(ROOT) / "tests" / "fixtures" / "mini.yaml"


def test_plan_names_the_command_and_the_tools(capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert cli(["plan", str(MINI), "--engine", "mcp-reference"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "engine mcp-reference (engines/mcp-reference.yaml): adapter mcp, starts "
        "`{python} -m memeval.servers.mcp_reference` (MCP over stdio; stopped when the run ends); tools named: "
        "write=remember, recall=search, list=list_memories, forget=forget, erase=erase")
    bare = describe_engine(resolve_engine("mcp"))
    assert bare.endswith("no server yet: give settings.command (stdio) or settings.url (streamable HTTP), "
                         "or --server CMD")
    served = describe_engine(with_command(resolve_engine("mcp"), "memeval serve mcp --embedder none"))
    assert "starts `memeval serve mcp --embedder none`" in served
    assert served.endswith("write/recall/list/forget/erase discovered from the server's tool list")


def test_server_is_only_for_adapters_that_start_one_and_must_be_a_command() -> None:
    with pytest.raises(UsageError, match="does not start a server"):
        with_command(resolve_engine("reference"), "memeval serve mcp")
    with pytest.raises(UsageError, match="empty"):
        with_command(resolve_engine("mcp"), "  ")
    with pytest.raises(UsageError, match="--server"):
        with_command(resolve_engine("mcp"), "memeval 'serve")
    assert with_command(resolve_engine("mcp"), "a 'b c'").settings == {"command": ["a", "b c"]}


def test_an_mcp_definition_beside_a_suite_that_starts_a_server_is_refused(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "engines").mkdir()
    (tmp_path / "specs" / "suite.yaml").write_text(MINI.read_text())
    (tmp_path / "engines" / "sneaky.yaml").write_text(
        'engine: sneaky\nadapter: mcp\nsettings:\n  command: ["sh", "-c", "touch pwned"]\n')
    (tmp_path / "engines" / "remote.yaml").write_text(
        'engine: remote\nadapter: mcp\nsettings:\n  url: "http://127.0.0.1:9/mcp"\n')
    monkeypatch.setattr(engine_def, "SHIPPED", str(tmp_path / "no-such-folder"))
    monkeypatch.chdir(tmp_path / "specs")
    with pytest.raises(UsageError, match=r"lies next to the suite and starts a process \(`sh -c 'touch pwned'`\)"):
        resolve_engine("sneaky", str(tmp_path / "specs" / "suite.yaml"))
    assert resolve_engine("remote", str(tmp_path / "specs" / "suite.yaml")).adapter == "mcp"  # starts nothing


@pytest.mark.slow
@pytest.mark.parametrize("args", [["--http", "0"], ["--bogus"], ["--embedder", "huge"]])
def test_serve_mcp_usage_errors_exit_2(args: list[str]) -> None:
    done = subprocess.run([*MEMEVAL, "serve", "mcp", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "memeval serve mcp" in done.stderr


@pytest.mark.slow
def test_serve_mcp_saves_its_tenants_when_terminated(tmp_path: Path) -> None:
    """Written over HTTP, stopped with SIGTERM, reopened: the memory is still there."""
    import httpx

    from memeval.engines.base import MemoryItem, RecallRequest
    from memeval.engines.mcp import create
    from memeval.engines.server import free_port

    def serve() -> tuple[subprocess.Popen[str], str]:
        port = free_port()
        process = subprocess.Popen([*MEMEVAL, "serve", "mcp", "--http", str(port), "--embedder", "none", "--path",
                                    str(tmp_path / "kept")], cwd=ROOT, stderr=subprocess.DEVNULL, text=True)
        for _ in range(1200):
            try:
                httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=1)
                return process, f"http://127.0.0.1:{port}/mcp"
            except httpx.TransportError:
                assert process.poll() is None
                time.sleep(0.05)
        raise AssertionError("serve mcp did not listen")

    written = MemoryItem("t", "learnings", "learning", "The zircon badge opens the north door.")
    process, url = serve()
    engine = create({"url": url})
    engine.write(written)
    engine.close()
    process.terminate()
    assert process.wait(60) == 0
    process, url = serve()
    try:
        engine = create({"url": url})
        assert [h.item for h in engine.recall(RecallRequest("t", ("learnings",), "zircon", 3))] == [written]
        engine.close()
    finally:
        process.terminate()
        process.wait(60)
