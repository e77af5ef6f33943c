"""A lean harness: an offline ``memeval run`` loads no module it does not use, commands load on
first use, and YAML read through libyaml gives the same data, marks and messages as the
pure-Python loader (which remains the fallback)."""

from __future__ import annotations

import json
import os
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
UNUSED = ("memeval.servers", "memeval.llm", "memeval.datasets", "memeval.sweep", "memeval.comparison",
          "memeval.engines.conformance", "httpx", "openai")


def test_every_command_loads_under_its_own_name():
    names = cli.list_commands(None)  # type: ignore[arg-type]
    assert {"run", "validate", "import", "check-engine", "serve"} <= set(names)
    for name in names:
        command = cli.get_command(None, name)  # type: ignore[arg-type]
        assert command is not None and command.name == name
    assert cli.get_command(None, "runn") is None  # type: ignore[arg-type]


# What an offline run may import from outside the standard library before it publishes: the CLI,
# YAML, the schema validator, numpy, the embedding model, the ANN index (when installed), and
# whatever they import themselves in this environment (e.g. jsonschema's optional format checkers).
BEFORE_PUBLISHING = ("click", "yaml", "jsonschema", "numpy", "static_model", "faiss")
# ... and what publishing adds: Jinja for run.md and run.html.
PUBLISHING = ("jinja2",)
_CLOSURE = """import importlib, json, sys
def loaded(roots):
    for root in roots:
        try:
            importlib.import_module(root)
        except ImportError:
            pass
    return sorted(sys.modules)
print(json.dumps({"before": loaded(sys.argv[1].split(",")), "after": loaded(sys.argv[2].split(","))}))
"""
# What a run without --repeat, --junit or --format json, and not on a terminal, has no use for.
UNASKED = ("memeval.runner.repeat", "memeval.report.ci", "memeval.report.junit", "memeval.score.power", "rich")
RUN_COMMAND = {"memeval.cli", "memeval.cli.run", "memeval.cli.executing", "memeval.cli.numbers"}
_SNAPSHOT = """import json, sys
before = []
class Snapshot:  # sys.modules as the run starts publishing (the first import of the publisher)
    def find_spec(self, name, path=None, target=None):
        if name == "memeval.report.publish" and not before:
            before.extend(sys.modules)
sys.meta_path.insert(0, Snapshot())
from memeval.cli import main
try:
    main(["run", sys.argv[1], "--quiet", "--out", sys.argv[2]])
except SystemExit as done:
    assert done.code == 0, done.code
print(json.dumps({"before": sorted(before), "after": sorted(sys.modules)}))
"""


def _third_party(modules: list[str]) -> set[str]:
    tops = {m.split(".")[0] for m in modules} - set(sys.stdlib_module_names)
    return {t for t in tops if t != "memeval" and not t.startswith("_") and t != "cython_runtime"}


@pytest.fixture(scope="module")
def offline_imports(tmp_path_factory) -> dict[str, list[str]]:
    """sys.modules of a real offline ``memeval run --quiet`` as it starts publishing and at its end."""
    out = str(tmp_path_factory.mktemp("lean") / "run")
    done = subprocess.run([sys.executable, "-c", _SNAPSHOT, str(Path(FIXTURES) / "mini.yaml"), out],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    modules: dict[str, list[str]] = json.loads(done.stdout.splitlines()[-1])
    return modules


@pytest.fixture(scope="module")
def allowed_imports() -> dict[str, set[str]]:
    """The third-party packages the lean set's roots import in this environment, before and with
    publishing."""
    done = subprocess.run([sys.executable, "-c", _CLOSURE, ",".join(BEFORE_PUBLISHING), ",".join(PUBLISHING)],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    return {k: _third_party(v) for k, v in json.loads(done.stdout.splitlines()[-1]).items()}


@pytest.mark.slow
def test_an_offline_run_imports_no_server_answerer_or_dataset_module(offline_imports):
    loaded = offline_imports["after"]
    assert "memeval.runner.session" in loaded and "memeval.spec.load" in loaded  # it did run
    assert [m for m in loaded if m.startswith(UNUSED + UNASKED)] == []
    assert {m for m in loaded if m.startswith("memeval.cli")} == RUN_COMMAND  # no other command's module


@pytest.mark.slow
def test_an_offline_run_imports_only_the_lean_set_and_jinja_only_to_publish(offline_imports, allowed_imports):
    before, after = offline_imports["before"], offline_imports["after"]
    assert before, "the run never reached publishing"
    assert _third_party(before) <= allowed_imports["before"], _third_party(before) - allowed_imports["before"]
    assert _third_party(after) <= allowed_imports["after"], _third_party(after) - allowed_imports["after"]
    assert not _third_party(before) & {"jinja2", "markupsafe", "rich", "httpx", "openai", "dask"}
    assert not [m for m in before if m.startswith(("memeval.report.render", "memeval.report.html_view"))]
    assert {"memeval.report.publish", "jinja2"} <= set(after)  # it did publish, and Jinja loaded for it


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


def test_the_templates_compile_once_per_process_and_an_edited_one_is_read_again(tmp_path):
    from memeval.report.render import environment

    packaged = environment()
    assert environment() is packaged  # one per process
    assert packaged.bytecode_cache is None  # nothing compiled is loaded from a file
    (tmp_path / "run.md.j2").write_text("mine {{ 1 + 1 }}\n")
    own = environment(str(tmp_path))
    assert own is not packaged
    assert own.get_template("run.md.j2").render() == "mine 2\n"
    (tmp_path / "run.md.j2").write_text("edited\n")
    os.utime(tmp_path / "run.md.j2", (1, 1))  # a changed mtime, however coarse the file system's clock
    assert own.get_template("run.md.j2").render() == "edited\n"  # an edited template is read again


def _errors(validator, data) -> list[tuple]:
    return sorted((tuple(map(str, e.absolute_path)), str(e.validator), e.message) for e in validator.iter_errors(data))


@pytest.mark.parametrize("path", YAML_FILES + BROKEN, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_validator_with_references_inlined_finds_the_errors_the_schema_finds(path):
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    from memeval.spec import validate

    try:
        data = yamlload.read_yaml(path.read_bytes())[0]
    except yamlload.YamlProblem:
        pytest.skip("not YAML that parses")
    name = ("matrix" if "matrix" in data else "engine" if "adapter" in data else "suite" if "suite" in data
            else "scenario") if isinstance(data, dict) else "suite"
    registry = Registry().with_resources((validate.schema(n)["$id"], Resource.from_contents(validate.schema(n)))
                                         for n in validate.available_schemas())
    as_written = Draft202012Validator(validate.schema(name), registry=registry)
    assert "$ref" not in json.dumps({k: v for k, v in validate._validator(name).schema.items() if k != "$defs"})
    assert _errors(validate._validator(name), data) == _errors(as_written, data)
