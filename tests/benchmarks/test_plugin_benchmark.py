"""A third-party benchmark package (tests/plugin_benchmark, its own pyproject and entry point)
is a full benchmark: installed into a fresh virtual environment beside memeval, ``memeval
import toy`` writes its file as a suite, and a suite streamed from the file runs, graded by the
toy's own grader under ``--llm``, with the toy's table in run.md. Adding a benchmark is one
package and one entry point; nothing in memeval changes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memeval.servers.launch import start_server

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "tests" / "plugin_benchmark"
SESSIONS = [
    {"id": "s1", "date": "2024-03-05 09:30", "facts": ["My cat is called Tom.", "I moved to Lisbon in May."],
     "questions": [{"id": "s1-q1", "question": "What is my cat called?", "answer": "Tom", "kind": "pets"},
                   {"id": "s1-q2", "question": "Where did I move to in May?", "answer": "Lisbon", "kind": "places"}]},
    {"id": "s2", "date": "2024-03-07 18:00", "facts": ["My dog Rex likes the beach."],
     "questions": [{"id": "s2-q1", "question": "What is my dog's name?", "answer": "Rex", "kind": "pets"}]},
]


def run(argv: list[str | Path], cwd: Path, timeout: float = 300, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in argv], cwd=cwd, text=True, capture_output=True, timeout=timeout,
                          env={**os.environ, **env}, check=False)


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv (the interpreter's own packages visible) holding memeval and the toy, built from copies."""
    tmp = tmp_path_factory.mktemp("toy")
    skip = shutil.ignore_patterns("*.egg-info", "build", "__pycache__")
    plugin, source = tmp / "plugin", tmp / "memeval-source"
    shutil.copytree(PLUGIN, plugin, ignore=skip)
    shutil.copytree(ROOT / "memeval", source / "memeval", ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    base = getattr(sys, "_base_executable", sys.executable)
    made = run([base, "-m", "venv", "--system-site-packages", tmp / "venv"], tmp)
    assert made.returncode == 0, made.stderr
    pip = [tmp / "venv" / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps"]
    for package in (source, plugin):
        installed = run([*pip, package], tmp)
        assert installed.returncode == 0, installed.stderr[-2000:]
    return tmp / "venv"


@pytest.mark.slow
def test_a_benchmark_from_outside_imports_and_runs_graded_by_its_own_grader(venv: Path, tmp_path: Path) -> None:
    memeval = venv / "bin" / "memeval"
    (tmp_path / "toy.json").write_text(json.dumps(SESSIONS), encoding="utf-8")
    imported = run([memeval, "import", "toy", tmp_path / "toy.json", "-o", tmp_path / "imported"], tmp_path)
    assert imported.returncode == 0, imported.stdout + imported.stderr
    assert "toy v1" in imported.stdout and "2 scenarios, 3 probes" in imported.stdout
    assert "grader: toy-exact" in (tmp_path / "imported" / "suite.yaml").read_text(encoding="utf-8")

    (tmp_path / "suite.yaml").write_text("suite: toy-streamed\nabout: the toy benchmark\n"
                                         "dataset:\n  format: toy\n  path: toy.json\n  grader: toy-exact\n")
    with start_server("mock_inference") as mock:
        env = {"EVAL_LLM_URL": mock.url + "/v1", "EVAL_LLM_KEY": "sk-test", "OPENROUTER_API_KEY": "",
               "HOME": str(tmp_path), "MEMEVAL_CACHE_DIR": str(tmp_path / "cache")}
        for suite, out in ((tmp_path / "suite.yaml", "streamed"), (tmp_path / "imported" / "suite.yaml", "imported")):
            ran = run([memeval, "run", suite, "--llm", "--out", tmp_path / out, "--quiet"], tmp_path, **env)
            assert ran.returncode in (0, 1), ran.stdout + ran.stderr
    for out in ("streamed", "imported"):
        record = json.loads((tmp_path / out / "run.json").read_text(encoding="utf-8"))
        assert record["benchmark"]["format"] == "toy" and record["benchmark"]["grader"] == "toy-exact"
        assert [g["name"] for g in record["benchmark"]["graders"]] == ["toy-exact"]
        answered = [p for p in record["probes"] if p["phase"] == "recall" and p.get("llm_answer") is not None]
        assert len(answered) == 3
        for p in answered:  # the toy's rule, recomputed here
            assert p["grader_score"] == (1.0 if p["expect"][0].lower() in p["llm_answer"].lower() else 0.0)
            assert p["grades"] == {"toy-exact": p["grader_score"]}
        md = (tmp_path / out / "run.md").read_text(encoding="utf-8")
        assert "## Benchmark: Toy (v1)" in md and "Measured: model answer, scored by toy-exact." in md
        assert "| kind | exact (toy-exact) | n |" in md
        assert "| pets |" in md and "| places |" in md and "| overall |" in md


@pytest.mark.slow
def test_a_format_nothing_installs_is_refused_with_a_suggestion(venv: Path, tmp_path: Path) -> None:
    (tmp_path / "toy.json").write_text(json.dumps(SESSIONS), encoding="utf-8")
    (tmp_path / "suite.yaml").write_text("suite: typo\nabout: a typo\ndataset:\n  format: toi\n  path: toy.json\n")
    checked = run([venv / "bin" / "memeval", "validate", tmp_path / "suite.yaml"], tmp_path)
    assert checked.returncode == 2, checked.stdout + checked.stderr
    assert "unknown benchmark 'toi' (did you mean 'toy'?)" in checked.stderr
    wrong = run([venv / "bin" / "memeval", "import", "toi", tmp_path / "toy.json", "-o", tmp_path / "out"], tmp_path)
    assert wrong.returncode == 2 and "unknown benchmark 'toi' (did you mean 'toy'?)" in wrong.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_the_built_in_benchmarks_prompts_ship_in_the_installed_package(venv: Path, tmp_path: Path) -> None:
    code = ("import memeval.benchmarks.longmemeval.judge as lme, memeval.benchmarks.locomo.judge as j; "
            "print(lme.__file__); print(len(lme.lme_templates()), j.shipped().name)")
    shown = run([venv / "bin" / "python", "-c", code], tmp_path)
    assert shown.returncode == 0, shown.stderr
    where, counts = shown.stdout.splitlines()
    assert str(ROOT) not in where and "site-packages" in where  # the wheel's copy, not this checkout
    assert counts == "7 mem0-j"
