"""A lean harness: an offline ``memeval run`` loads no module it does not use, commands load on
first use, and YAML read through libyaml gives the same data, marks and messages as the
pure-Python loader (which remains the fallback)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memeval.cli import cli
from memeval.errors import SpecError
from memeval.spec import yamlload
from memeval.spec.specfile import load_any
from tests.conftest import FIXTURES, ROOT

YAML_FILES = sorted(p for p in Path(ROOT).glob("**/*.yaml") if ".venv" not in p.parts and "broken" not in p.parts)
BROKEN = sorted((Path(ROOT) / "tests" / "spec" / "broken").glob("**/*.yaml"))
# What an offline run has no use for: test servers, the answerer, dataset readers, sweeps, compare.
UNUSED = ("memeval.servers", "memeval.llm", "memeval.datasets", "memeval.sweep", "memeval.compare",
          "memeval.engines.conformance", "httpx", "openai")


def test_every_command_loads_under_its_own_name():
    names = cli.list_commands(None)  # type: ignore[arg-type]
    assert {"run", "validate", "import", "check-engine", "serve"} <= set(names)
    for name in names:
        command = cli.get_command(None, name)  # type: ignore[arg-type]
        assert command is not None and command.name == name
    assert cli.get_command(None, "runn") is None  # type: ignore[arg-type]


@pytest.mark.slow
def test_an_offline_run_imports_no_server_answerer_or_dataset_module(tmp_path):
    script = ("import json, sys\nfrom memeval.cli import main\n"
              "try:\n    main(['run', sys.argv[1], '--quiet', '--out', sys.argv[2]])\nexcept SystemExit as done:\n"
              "    assert done.code == 0, done.code\nprint(json.dumps(sorted(sys.modules)))\n")
    out = subprocess.run([sys.executable, "-c", script, str(Path(FIXTURES) / "mini.yaml"), str(tmp_path / "run")],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    loaded = json.loads(out.splitlines()[-1])
    assert "memeval.run.session" in loaded and "memeval.spec.load" in loaded  # it did run
    assert [m for m in loaded if m.startswith(UNUSED)] == []


def _pure(raw: bytes):
    return yamlload._compose(raw.decode("utf-8"), yamlload._Loader)


@pytest.mark.skipif(yamlload._FastLoader is None, reason="PyYAML without libyaml")
@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_c_parser_path_gives_the_pure_python_data_and_marks(path):
    raw = path.read_bytes()
    data, marks = yamlload._compose(raw.decode("utf-8"), yamlload._FastLoader)
    pure_data, pure_marks = _pure(raw)
    assert data == pure_data and marks == pure_marks


def _messages(path: Path) -> list[str]:
    try:
        load_any(str(path.relative_to(ROOT)))
    except SpecError as err:
        return [issue.render() for issue in err.issues]
    return []


def test_broken_specs_read_the_same_without_libyaml(monkeypatch):
    monkeypatch.chdir(ROOT)
    with_c = {p: _messages(p) for p in BROKEN}
    monkeypatch.setattr(yamlload, "_FastLoader", None)
    assert {p: _messages(p) for p in BROKEN} == with_c
    assert sum(1 for m in with_c.values() if m) > 50  # the corpus was read, and is broken


@pytest.mark.parametrize("raw, message", [
    (b"[" * 5000, "nested deeper than 64 levels"),
    (b"a: 1\na: 2\n", "duplicate key 'a' (first at line 1)"),
    (b"a: !!python/object:os.system x\n", "tag '!!python/object:os.system' is not allowed"),
    (b"base: &b {x: 1}\nother: {<<: *b}\n", "merge keys ('<<') are not supported"),
])
def test_hostile_yaml_is_refused_the_same_on_both_paths(raw, message, monkeypatch):
    with pytest.raises(yamlload.YamlProblem) as fast:
        yamlload.read_yaml(raw)
    monkeypatch.setattr(yamlload, "_FastLoader", None)
    with pytest.raises(yamlload.YamlProblem) as pure:
        yamlload.read_yaml(raw)
    assert message in fast.value.message
    assert (fast.value.line, fast.value.column, fast.value.message) == (pure.value.line, pure.value.column, pure.value.message)


def test_an_alias_bomb_is_stopped_on_the_c_parser_path():
    rows = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    rows += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 8)]
    with pytest.raises(yamlload.YamlProblem, match="alias bomb"):
        yamlload.read_yaml("\n".join(rows).encode())
