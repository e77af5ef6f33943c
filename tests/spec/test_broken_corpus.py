"""The broken-spec corpus: every way of getting a spec wrong produces exactly the message it should.

Each ``tests/spec/broken/*.yaml`` starts with comment lines naming what loading it must print:

* ``# expect: <file:line:col  path: message>`` — one line per issue, rendered by
  :meth:`SpecIssue.render` with the file path relative to the repository root. Loading the file
  must raise :class:`SpecError` whose issues render to exactly these lines, in this order (the
  order :class:`SpecError` sorts them in: file, line, column).
* ``# expect-valid: <description>`` — a control: the file is valid and loads to this description.

Files under ``broken/inc/`` are include targets, not cases. This proves that messages name the
right place (line, column, JSON path) and say how to fix the problem, that every issue in every
included file is reported at once, and that ``memeval validate`` prints them all and exits 2.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memeval.errors import SpecError
from memeval.spec.load import load_suite
from memeval.spec.specfile import load_any
from tests import conftest
from tests.conftest import MEMEVAL, cli

ROOT = Path(conftest.ROOT)
BROKEN = ROOT / "tests" / "spec" / "broken"
CASES = sorted(BROKEN.glob("*.yaml"))


def rel(path: Path) -> str:
    """The path as the expectations spell it: relative to the repository root."""
    return path.relative_to(ROOT).as_posix()


def header(path: Path) -> tuple[str, list[str]]:
    """('valid', [description]) or ('broken', [expected lines]) from a case's leading comments."""
    expect, valid = [], []
    for line in path.read_text("utf-8").splitlines():
        if line.startswith("# expect: "):
            expect.append(line.removeprefix("# expect: "))
        elif line.startswith("# expect-valid: "):
            valid.append(line.removeprefix("# expect-valid: "))
        else:
            break
    assert bool(expect) != bool(valid), f"{rel(path)} must start with '# expect:' lines or one '# expect-valid:' line"
    return ("valid", valid) if valid else ("broken", expect)


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    # Paths in messages are the paths the loader was given; run from the root so they match.
    monkeypatch.chdir(ROOT)


def rendered(path: str, loader=load_any) -> list[str]:
    with pytest.raises(SpecError) as caught:
        loader(path)
    return [issue.render() for issue in caught.value.issues]


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_case_reports_exactly_its_expected_issues(case: Path) -> None:
    kind, expected = header(case)
    if kind == "valid":
        assert load_any(rel(case)) == expected[0]
        return
    assert rendered(rel(case)) == expected


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_load_suite_agrees_with_load_any(case: Path) -> None:
    """validate (load_any) and run (load_suite) report a suite or scenario file the same way;
    a file that is no spec at all, run reads as a broken suite: refused too, in its own words."""
    kind, expected = header(case)
    if kind == "valid":
        assert load_suite(rel(case)).name
    elif not any("not a memeval spec" in line for line in expected):
        assert rendered(rel(case), load_suite) == expected
    else:
        assert rendered(rel(case), load_suite)


def test_corpus_is_broad_and_well_formed() -> None:
    kinds = [header(case) for case in CASES]
    broken = [lines for kind, lines in kinds if kind == "broken"]
    assert len(broken) >= 30
    assert any(kind == "valid" for kind, _ in kinds), "the corpus needs a valid control"
    for lines in broken:
        assert len(lines) == len(set(lines)), "an issue is expected twice"
        for line in lines:
            assert (ROOT / line.split(":", 1)[0]).is_file(), f"expectation names a missing file: {line}"
    used = {line.split(":", 1)[0] for lines in broken for line in lines}
    for target in sorted((BROKEN / "inc").glob("*.yaml")):
        referenced = any(f"inc/{target.name}" in case.read_text("utf-8") for case in CASES)
        assert referenced, f"{rel(target)} is included by no case"
    assert "tests/spec/broken/inc/bad-route.yaml" in used and "tests/spec/broken/inc/bad-agent.yaml" in used


def test_several_errors_come_back_at_once_in_file_order() -> None:
    lines = rendered("tests/spec/broken/several-errors.yaml")
    assert len(lines) == 5
    places = [tuple(int(n) for n in line.split("  ", 1)[0].split(":")[1:]) for line in lines]
    assert places == sorted(places)


def run_validate(capsys: pytest.CaptureFixture[str], *files: str) -> tuple[int, str, str]:
    code = cli(["validate", *files])
    out, err = capsys.readouterr()
    return code, out, err


def test_validate_prints_every_issue_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    files = ["tests/spec/broken/several-errors.yaml", "tests/spec/broken/errors-in-two-includes.yaml"]
    expected = [line for f in files for line in header(ROOT / f)[1]]
    code, out, err = run_validate(capsys, *files)
    assert code == 2
    assert out == ""
    assert err.splitlines() == sorted(expected) + [f"{len(expected)} error(s); nothing was run."]


def test_validate_reports_good_files_and_still_fails_on_a_bad_one(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_validate(capsys, "tests/spec/broken/valid-x-keys.yaml", "tests/spec/broken/enum-route.yaml")
    assert code == 2
    assert out == "tests/spec/broken/valid-x-keys.yaml: ok (suite notes-allowed: 1 scenario, 1 probe)\n"
    assert err.splitlines() == header(BROKEN / "enum-route.yaml")[1] + ["1 error(s); nothing was run."]


def test_validate_on_a_valid_file_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_validate(capsys, "tests/fixtures/mini.yaml")
    assert (code, err) == (0, "")
    assert out == "tests/fixtures/mini.yaml: ok (suite mini: 1 scenario, 8 probes)\n"


@pytest.mark.slow


def test_console_entry_point_exits_2_without_a_traceback() -> None:
    """The real process: the exit code and stderr a user sees."""
    case = "tests/spec/broken/duplicate-yaml-key.yaml"
    proc = subprocess.run(
        [*MEMEVAL, "validate", case],
        cwd=ROOT, capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == header(ROOT / case)[1] + ["1 error(s); nothing was run."]
