"""The servers' ``main()`` exit codes for a start that cannot happen (in process: no server runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memeval.servers import fake_cortex


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
