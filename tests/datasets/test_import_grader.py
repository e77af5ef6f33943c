"""The import route selects a benchmark grader: ``memeval import`` writes the benchmark's
official grader into the suite it writes, and a suite-level ``grader:`` / ``prompts:`` is checked
as ``dataset.grader`` / ``dataset.prompts`` are (file:line:col, exit 2, before any engine call)."""

import pytest
import yaml

from memeval.runner.benchmark import benchmark_info
from memeval.spec.load import load_suite
from tests.conftest import cli
from tests.datasets.files import lme_records, locomo_records, write

FILES = {"longmemeval": ("longmemeval_s.json", lme_records), "locomo": ("locomo10.json", locomo_records)}


def _imported(tmp_path, capsys, fmt):
    name, records = FILES[fmt]
    write(tmp_path / name, records())
    assert cli(["import", fmt, str(tmp_path / name), "-o", str(tmp_path / "imported")]) == 0
    capsys.readouterr()
    return tmp_path / "imported" / "suite.yaml"


@pytest.mark.parametrize("fmt, grader, words", [
    ("longmemeval", "longmemeval-judge", "LongMemEval's official judge"),
    ("locomo", "locomo-f1", "the alternative is mem0-j"),
])
def test_the_import_writes_the_official_grader_with_a_comment(tmp_path, capsys, fmt, grader, words):
    path = _imported(tmp_path, capsys, fmt)
    text = path.read_text()
    assert yaml.safe_load(text)["grader"] == grader
    before = text[:text.index(f"\ngrader: {grader}\n")].splitlines()
    assert before[-1].startswith("# ") and words in "\n".join(before[-2:])
    info = benchmark_info(load_suite(str(path)))
    assert info is not None and info.grader == grader


def _rewrite(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def _issue_at(path, capsys):
    assert cli(["validate", str(path)]) == 2
    return capsys.readouterr().err


def test_an_imported_suite_can_choose_mem0_j_and_its_template(tmp_path, capsys):
    path = _imported(tmp_path, capsys, "locomo")
    (path.parent / "j.txt").write_text("Q {question} A {answer} R {response}")
    _rewrite(path, "grader: locomo-f1\n", "grader: mem0-j\nprompts:\n  j: j.txt\n")
    info = benchmark_info(load_suite(str(path)))
    assert info is not None and info.grader == "mem0-j"


def _line_of(path, start):
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if line.startswith(start))


@pytest.mark.parametrize("fmt, old, new, at, words", [
    ("longmemeval", "grader: longmemeval-judge\n", "grader: longmemeval-judge\nprompts:\n  temporal: t.txt\n",
     ("  temporal:", 3), "unknown prompt key 'temporal' for longmemeval-judge (did you mean 'temporal-reasoning'?)"),
    ("locomo", "grader: locomo-f1\n", "grader: mem0-j\nprompts:\n  j: missing.txt\n", ("  j:", 6),
     "cannot read the prompt template"),
    ("locomo", "grader: locomo-f1\n", "grader: locomo-f1\nprompts:\n  j: t.txt\n", ("prompts:", 1),
     "prompts are for a judge grader: add grader: mem0-j"),
    ("longmemeval", "grader: longmemeval-judge\n", "grader: mem0-j\n", ("grader:", 9),
     "mem0-j grades locomo questions, and this file is longmemeval: use longmemeval-judge"),
])
def test_a_suite_level_grader_is_checked_like_the_dataset_one(tmp_path, capsys, fmt, old, new, at, words):
    path = _imported(tmp_path, capsys, fmt)
    (path.parent / "t.txt").write_text("Q {question} A {answer} R {response}")
    _rewrite(path, old, new)
    err = _issue_at(path, capsys)
    assert f"{path}:{_line_of(path, at[0])}:{at[1]}" in err and words in err, err


def test_a_suite_level_grader_needs_a_benchmark(tmp_path, capsys):
    path = tmp_path / "plain.yaml"
    path.write_text("suite: plain\nabout: no benchmark\ngrader: locomo-f1\nscenarios: []\n")
    err = _issue_at(path, capsys)
    assert f"{path}:3:1" in err and "declare it under dataset:" in err and "memeval import" in err


def test_a_dataset_suite_says_its_grader_under_dataset(tmp_path, capsys):
    write(tmp_path / "locomo10.json", locomo_records())
    path = tmp_path / "bench.yaml"
    path.write_text("suite: s\nabout: a\ngrader: mem0-j\ndataset:\n  format: locomo\n  path: locomo10.json\n")
    err = _issue_at(path, capsys)
    assert f"{path}:3:1" in err and "move grader: under dataset:" in err


def test_without_a_model_the_report_says_the_preference_type_needs_one(tmp_path, capsys):
    path = _imported(tmp_path, capsys, "longmemeval")
    assert cli(["run", str(path), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    md = (tmp_path / "run" / "run.md").read_text()
    section = md[md.index("## Benchmark"):md.index("## KPIs")]
    assert "single-session-preference: 1 question(s) judged only (the gold is a rubric" in section
    assert "they need a model (run with --llm) and the longmemeval-judge grader" in section
    assert "| single-session-preference | – | 0 |" in section  # no data, never 0%
