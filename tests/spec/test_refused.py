"""Specs and definitions that used to pass validation and then crash, hang or run code (issue 17).

Each is refused by the real ``memeval`` process with exit 2, a located message and no
traceback, before any engine is touched: non-finite numbers in every schema, dates past the
year 9999, devices and FIFOs, includes outside the suite's folder (whose content is never
echoed), an engine definition lying beside a suite that would start a process, and templates
that reach Python through Jinja globals.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memeval.errors import SpecError, UsageError
from memeval.llm.settings import load_prompt
from memeval.report.render import environment
from memeval.spec import engine_def
from memeval.spec.engine_def import resolve_engine
from memeval.spec.specfile import load_any
from tests.conftest import FIXTURES, MEMEVAL, ROOT, cli

BROKEN = Path(ROOT) / "tests" / "spec" / "broken"
MINI = Path(FIXTURES) / "mini.yaml"
ENV = {**os.environ, "PYTHONIOENCODING": "utf-8"}


def memeval(*args: str, cwd: Path | str = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``memeval ARGS`` as its own process; a hang fails the test instead of stalling it."""
    return subprocess.run([*MEMEVAL, *args], cwd=cwd, capture_output=True, text=True, timeout=60, env=env or ENV)


def expected(case: str) -> list[str]:
    lines = (BROKEN / f"{case}.yaml").read_text("utf-8").splitlines()
    return [line.removeprefix("# expect: ") for line in lines if line.startswith("# expect: ")]


# --- numbers, dates and text that crashed plan/run ----------------------------------------

SUITE_HEAD = "suite: s\ninclude: [inc.yaml]\n"
SCENARIO = ("scenario: s\nabout: x\nagents: [{id: a}]\nprobes:\n"
            "  - {id: p, route: ask, agent: a, question: q, style: lexical, expect: [x]}\n")
ENGINE_HEAD = "engine: e\nadapter: cortex\n"
MATRIX_HEAD = "matrix: m\nengine: e.yaml\nsuite: suite.yaml\nprofiles: [{name: baseline}]\n"

# (file kind, text with the non-finite value on its last line)
NON_FINITE = {
    "suite turn_spacing_s": ("suite", SUITE_HEAD + "defaults:\n  turn_spacing_s: .inf\n"),
    "suite enrich_wait_s": ("suite", SUITE_HEAD + "defaults:\n  enrich_wait_s: .nan\n"),
    "suite settle_timeout_s": ("suite", SUITE_HEAD + "defaults:\n  settle_timeout_s: -.Inf\n"),
    "suite llm timeout_s": ("suite", SUITE_HEAD + "llm:\n  timeout_s: .NaN\n"),
    "scenario confidence": ("scenario", SCENARIO + "learnings:\n  - {id: l, kind: fact, text: x, confidence: .nan}\n"),
    "engine timeout_s": ("engine", ENGINE_HEAD + "settings:\n  timeout_s: .inf\n"),
    "engine enrich_wait_s": ("engine", ENGINE_HEAD + "enrich_wait_s: .nan\n"),
    "engine ready_timeout_s": ("engine", ENGINE_HEAD + "server:\n  start: [x]\n  ready_timeout_s: .inf\n"),
    "matrix cell_timeout_s": ("matrix", MATRIX_HEAD + "cell_timeout_s: .inf\n"),
    "matrix run_args": ("matrix", MATRIX_HEAD + "run_args:\n  settle_timeout_s: .nan\n"),
}


@pytest.mark.parametrize("name", list(NON_FINITE))
def test_non_finite_numbers_are_refused_in_every_schema(tmp_path: Path, name: str) -> None:
    kind, text = NON_FINITE[name]
    (tmp_path / "inc.yaml").write_text(SCENARIO)
    (tmp_path / "suite.yaml").write_text(SUITE_HEAD)
    (tmp_path / "e.yaml").write_text(ENGINE_HEAD)
    path = tmp_path / f"{kind}-case.yaml"
    path.write_text(text)
    with pytest.raises(SpecError) as caught:
        load_any(str(path))
    [issue] = caught.value.issues
    assert issue.file == str(path) and issue.line == text.count("\n")
    assert "is not a finite number; write a number such as 60" in issue.message


def test_lone_surrogates_are_refused_in_keys_too(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO + '"x-\\udc00": note\n')
    with pytest.raises(SpecError) as caught:
        load_any(str(path))
    assert [(i.line, i.message.split(",")[0]) for i in caught.value.issues] == [(6, "text holds U+DC00")]


CRASHERS = ["date-day-overflow", "date-epoch-invalid", "date-epoch-9999", "non-finite-number", "lone-surrogate",
            "shared-tenant"]


@pytest.mark.slow
@pytest.mark.parametrize("case", CRASHERS)
def test_specs_that_crashed_plan_or_run_exit_2_from_validate_plan_and_run(tmp_path: Path, case: str) -> None:
    path = f"tests/spec/broken/{case}.yaml"
    started = time.perf_counter()
    load = pytest.raises(SpecError)
    with load:
        load_any(path if os.path.isabs(path) else os.path.join(ROOT, path))
    assert time.perf_counter() - started < 2.0  # a sanity bound, not a benchmark
    for command in (["validate", path], ["plan", path], ["run", path, "--out", str(tmp_path / "out")]):
        proc = memeval(*command)
        assert proc.returncode == 2, (command, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert proc.stderr.splitlines() == expected(case) + [f"{len(expected(case))} error(s); nothing was run."]
    assert not (tmp_path / "out").exists()


# --- files that are not files --------------------------------------------------------------

@pytest.mark.slow
def test_devices_and_fifos_are_refused_without_reading_from_them(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.yaml")
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    (tmp_path / "suite.yaml").write_text("suite: s\ninclude: [fifo.yaml, zero.yaml, /dev/zero]\n")
    proc = memeval("validate", "suite.yaml", "fifo.yaml", "/dev/zero", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [
        "/dev/zero:0:0  (root): cannot read: it is a device or socket, not a regular file; a spec is a YAML file",
        "fifo.yaml:0:0  (root): cannot read: it is a FIFO, not a regular file; a spec is a YAML file",
        "suite.yaml:2:22  include[1]: zero.yaml is outside the suite's folder . (an include never reads it); "
        "move or copy the scenario file into that folder",
        "suite.yaml:2:33  include[2]: /dev/zero is outside the suite's folder . (an include never reads it); "
        "move or copy the scenario file into that folder",
        "4 error(s); nothing was run.",  # the FIFO, named twice, is one error
    ]


@pytest.mark.slow
def test_an_include_outside_the_suite_folder_is_never_read_or_quoted(tmp_path: Path) -> None:
    canary = "sk-canary-outside-4242"
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / ".env").write_text(f"OPENAI_API_KEY={canary}\n")
    (tmp_path / "secret" / "keys.yaml").write_text(f"key: {canary}\n")
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "linked.yaml").symlink_to(tmp_path / "secret" / "keys.yaml")
    (suite / "suite.yaml").write_text("suite: s\ninclude: [../secret/.env, ../secret/*.yaml, linked.yaml]\n")
    proc = memeval("validate", str(suite / "suite.yaml"))
    assert proc.returncode == 2
    assert canary not in proc.stdout + proc.stderr
    assert [line.split("  ", 1)[1].split(" is ", 1)[0] for line in proc.stderr.splitlines()[:-1]] == [
        f"include[0]: {tmp_path}/secret/.env", f"include[1]: {tmp_path}/secret/keys.yaml", f"include[2]: {suite}/linked.yaml"]


# --- code never runs from data -------------------------------------------------------------

@pytest.fixture
def evil_tree(tmp_path: Path) -> Path:
    """A downloaded folder: a suite, and engine definitions beside it whose server plants a marker."""
    (tmp_path / "evil" / "specs").mkdir(parents=True)
    (tmp_path / "evil" / "engines").mkdir()
    (tmp_path / "elsewhere").mkdir()
    shutil.copy(MINI, tmp_path / "evil" / "specs" / "suite.yaml")
    start = f'["{sys.executable}", "-c", "open(\'{tmp_path / "pwned"}\', \'w\')"]'
    for name in ("reference", "evil"):
        (tmp_path / "evil" / "engines" / f"{name}.yaml").write_text(
            f"engine: {name}\nadapter: reference\nserver:\n  start: {start}\n")
    return tmp_path


@pytest.mark.slow
def test_an_engine_definition_beside_a_suite_never_starts_a_process(evil_tree: Path) -> None:
    suite = "../evil/specs/suite.yaml"
    ran = memeval("run", suite, "--out", "out", "--quiet", cwd=evil_tree / "elsewhere")
    assert ran.returncode == 0, ran.stderr  # the reference engine memeval ships, not the file beside the suite
    named = memeval("run", suite, "--engine", "evil", "--out", "out2", cwd=evil_tree / "elsewhere")
    assert named.returncode == 2 and "Traceback" not in named.stderr
    assert named.stderr.startswith("error: --engine evil: ../evil/engines/evil.yaml lies next to the suite and starts a process (`")
    assert named.stderr.rstrip().endswith("--engine ../evil/engines/evil.yaml if you trust it")
    assert not (evil_tree / "pwned").exists() and not (evil_tree / "elsewhere" / "out2").exists()


def test_without_a_shipped_definition_the_one_beside_the_suite_is_refused(evil_tree: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A wheel install ships no engines/ folder: the default engine name must still not pick up
    a process-starting file beside the suite."""
    monkeypatch.setattr(engine_def, "SHIPPED", str(evil_tree / "no-such-folder"))
    monkeypatch.chdir(evil_tree / "elsewhere")
    with pytest.raises(UsageError, match="lies next to the suite and starts a process"):
        resolve_engine("reference", "../evil/specs/suite.yaml")
    assert resolve_engine("reference").file is None  # no suite: the bare adapter


def test_plan_shows_the_process_a_run_would_start(evil_tree: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert cli(["plan", str(MINI), "--engine", "fake-cortex"]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == [
        "engine fake-cortex (engines/fake-cortex.yaml): adapter cortex, starts "
        "`{python} -m memeval.servers.fake_cortex --port {port}` unless CORTEX_DB_URL is set",
        "suite mini: 1 scenario(s)"]
    assert cli(["plan", str(MINI)]) == 0
    assert capsys.readouterr().out.startswith("engine reference (engines/reference.yaml): adapter reference, starts no process\n")
    monkeypatch.chdir(evil_tree / "elsewhere")
    assert cli(["plan", "../evil/specs/suite.yaml", "--engine", "../evil/engines/evil.yaml"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("engine evil (../evil/engines/evil.yaml): adapter reference, starts `") and "pwned" in first
    assert not (evil_tree / "pwned").exists()  # plan only says it


ESCAPES = [
    "{{ cycler.__init__.__globals__.os.system('touch pwned') }}",
    "{{ joiner.__init__.__globals__['os'].popen('touch pwned').read() }}",
    "{{ lipsum.__globals__.os.system('touch pwned') }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{% set x = namespace.__init__.__globals__ %}{{ x }}",
]


@pytest.mark.parametrize("payload", ESCAPES)
def test_prompt_templates_cannot_reach_python(tmp_path: Path, payload: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evil.j2").write_text(f"{{% block system %}}{payload}{{% endblock %}}{{% block user %}}q{{% endblock %}}")
    with pytest.raises(UsageError, match="^prompt evil: access to attribute"):
        load_prompt("evil.j2", str(tmp_path)).render({})
    assert not (tmp_path / "pwned").exists()


@pytest.mark.slow
def test_run_with_an_escaping_prompt_exits_2_before_the_engine(tmp_path: Path) -> None:
    (tmp_path / "evil.j2").write_text("{% block system %}" + ESCAPES[0] + "{% endblock %}{% block user %}q{% endblock %}")
    text = MINI.read_text("utf-8").replace("scenarios:\n", "llm: {prompt: evil.j2}\nscenarios:\n", 1)
    (tmp_path / "suite.yaml").write_text(text)
    env = {**ENV, "EVAL_LLM_URL": "http://127.0.0.1:9/v1", "EVAL_LLM_KEY": "", "OPENROUTER_API_KEY": ""}
    proc = memeval("run", "suite.yaml", "--llm", "--out", "out", cwd=tmp_path, env=env)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    # the preflight lists it among the run's unmet requirements, before any engine or model call
    assert proc.stderr.startswith("error: 1 unmet requirement(s); nothing was run:\n")
    assert "  prompt evil: access to attribute '__init__' of 'type' object is unsafe" in proc.stderr
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize("payload", ESCAPES)
def test_report_templates_cannot_reach_python(tmp_path: Path, payload: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.md.j2").write_text(payload)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "inc.md.j2").write_text("{% include '../run.md.j2' %}")
    env = environment(str(tmp_path))
    import jinja2

    with pytest.raises(jinja2.exceptions.SecurityError):
        env.get_template("run.md.j2").render()
    with pytest.raises(jinja2.exceptions.TemplateNotFound):  # includes stay inside the folder
        env.get_template("sub/inc.md.j2").render()
    assert not (tmp_path / "pwned").exists()
