"""The servers' ``main()`` exit codes for a start that cannot happen (in process: no server runs)."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memeval.servers.fake_cortex import server as fake_cortex

from memeval.servers.mock_inference import server as mock_inference


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port some other socket is listening on."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


@pytest.mark.parametrize(("main", "name"), [(fake_cortex.main, "fake-cortex"), (mock_inference.main, "mock-inference")])
def test_a_taken_port_exits_3(main: Callable[[list[str]], int], name: str, taken_port: int, capsys) -> None:
    assert main(["--port", str(taken_port)]) == 3
    assert capsys.readouterr().err.startswith(f"{name}: cannot listen on 127.0.0.1:{taken_port}: ")


@pytest.mark.parametrize("content", [None, "not json", '{"format": 1}'], ids=["directory", "not-json", "no-fields"])
def test_an_unusable_state_file_is_a_usage_error(tmp_path: Path, content: str | None, capsys) -> None:
    data = tmp_path
    if content is not None:
        data = tmp_path / "state.json"
        data.write_text(content)
    assert fake_cortex.main(["--data", str(data)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("fake-cortex: ") and str(data) in error and "state file" in error
    assert "listen" not in error


@pytest.mark.parametrize(
    ("main", "argv", "expected"),
    [
        (fake_cortex.main, ["--fail", "v1/recall"], "argument --fail: expected ROUTE:STATUS[:COUNT[:CODE]]"),
        (fake_cortex.main, ["--reset", "v1/events:x"], "argument --reset: expected ROUTE[:COUNT]"),
        (mock_inference.main, ["--fail", "chat"], "argument --fail: expected STATUS[:COUNT[:ROUTE]]"),
    ],
)
def test_a_malformed_fault_option_says_what_it_expects(
    main: Callable[[list[str]], int], argv: list[str], expected: str, capsys
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    assert expected in capsys.readouterr().err


@pytest.mark.parametrize(("main", "args"), [
    (fake_cortex.main, ["--index-delay", "nan"]), (fake_cortex.main, ["--pack-ttl", "-1"]),
    (fake_cortex.main, ["--wait-cap", "inf"]), (fake_cortex.main, ["--storm-every", "1.5"]),
    (fake_cortex.main, ["--port", "-1"]), (mock_inference.main, ["--latency", "nan"]),
    (mock_inference.main, ["--port", "70000"]),
])
def test_a_number_an_option_cannot_mean_exits_2_before_listening(main: Callable[[list[str]], int], args: list[str],
                                                                capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main(args)
    assert done.value.code == 2
    said = capsys.readouterr()  # the listening line goes to stdout (httpjson._serve_until_signal), the error to stderr
    assert f"argument {args[0]}: '{args[1]}'" in said.err and "listening" not in said.out


def test_a_number_from_the_environment_is_checked_too(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("FAKE_CORTEX_INDEX_DELAY", "nan")
    with pytest.raises(SystemExit) as done:
        fake_cortex.main([])
    assert done.value.code == 2 and "argument --index-delay: 'nan'" in capsys.readouterr().err
