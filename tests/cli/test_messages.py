"""Messages that say what will work: each hint names a step the user can take as printed."""

from __future__ import annotations

import re
import shlex
from dataclasses import replace
from pathlib import Path

import pytest

from memeval.errors import UsageError
from memeval.runner.output import folder_lock, in_use, run_folder
from memeval.score.derive import derive
from tests.comparison.factory import hits, run
from tests.comparison.test_setup import _paths, judged
from tests.conftest import cli
from tests.install.conftest import ROOT


def test_a_folder_in_use_says_wait_and_never_offers_resume_or_force(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "checkpoint.jsonl").write_text("{}\n")
    assert not in_use(str(out)) and not (out / ".memeval.lock").exists()  # probing creates nothing
    with folder_lock(str(out)):
        assert in_use(str(out))
        for force in (False, True):
            with pytest.raises(UsageError) as refused:
                run_folder("x", "r1", str(out), force)
            assert "in use by another memeval run; wait for it to end" in str(refused.value)
            assert "--resume" not in str(refused.value) and "--force" not in str(refused.value)
    assert not in_use(str(out))
    with pytest.raises(UsageError, match="--resume .* continues it, --force replaces it"):
        run_folder("x", "r1", str(out), False)  # no run holds it: both are real choices


def test_compares_allow_setup_diff_hint_works_as_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = judged(run(hits(18, 20), label="strict"), "a" * 64)
    b = judged(run(hits(18, 20), label="lenient"), "b" * 64)
    assert b.answerer is not None and b.answerer.judge is not None
    b = derive(replace(b, answerer=replace(b.answerer, judge=replace(b.answerer.judge, model="judge-other"))))
    paths = _paths(tmp_path, a, b)
    assert cli(["compare", *paths]) == 2
    hint = capsys.readouterr().err.strip().splitlines()[-1]
    option = shlex.split(hint.split("name the differences: ", 1)[1])
    assert option[0] == "--allow-setup-diff" and len(option) == 2, option  # several fields, one value
    assert cli(["compare", *paths, *option]) == 0


def test_the_readme_python_api_example_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Python API", 1)[1]
    example = re.search(r"```python\n(.*?)```", section, re.S)
    assert example is not None
    (tmp_path / "specs").symlink_to(ROOT / "specs")
    monkeypatch.chdir(tmp_path)
    exec(compile(example.group(1), "README.md (Python API)", "exec"), {})  # noqa: S102 - our own README
    printed = capsys.readouterr().out
    assert "pack hit (synthesis)" in printed and (tmp_path / "out" / "run.json").is_file()
