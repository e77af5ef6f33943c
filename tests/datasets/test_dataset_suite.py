"""A suite that declares ``dataset:`` streams the file at run time: it is verified at load (exit 2
at the ``dataset:`` key, before any engine call), plans exactly as its imported YAML does, and
runs on the reference engine unit by unit with the same results."""

import os

import pytest

from memeval.plan import plan_suite
from memeval.report.files import read_run
from memeval.spec.load import load_suite
from tests.conftest import cli
from tests.datasets.files import lme_records, locomo_records, write

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAKE_DEF = os.path.join(ROOT, "engines", "fake-cortex.yaml")
FILES = {"longmemeval": ("longmemeval_s.json", lme_records), "locomo": ("locomo10.json", locomo_records)}


def _dataset_suite(tmp_path, fmt, extra=""):
    name, records = FILES[fmt]
    write(tmp_path / name, records())
    suite = tmp_path / "bench.yaml"
    suite.write_text(f"suite: {fmt}-streamed\nabout: streamed\ndataset:\n  format: {fmt}\n  path: {name}\n{extra}")
    return suite


def _imported(tmp_path, fmt, capsys):
    name, _ = FILES[fmt]
    assert cli(["import", fmt, str(tmp_path / name), "-o", str(tmp_path / "imported")]) == 0
    capsys.readouterr()
    return tmp_path / "imported" / "suite.yaml"


@pytest.mark.parametrize("fmt", ["longmemeval", "locomo"])
def test_a_dataset_suite_plans_exactly_as_its_import(tmp_path, capsys, fmt):
    streamed = load_suite(str(_dataset_suite(tmp_path, fmt)))
    imported = load_suite(str(_imported(tmp_path, fmt, capsys)))
    assert streamed.scenarios == () and streamed.dataset is not None
    assert streamed.defaults.epoch == imported.defaults.epoch
    plans = plan_suite(streamed)
    assert plans and plans == plan_suite(imported)
    assert cli(["plan", str(tmp_path / "bench.yaml")]) == 0
    printed = capsys.readouterr().out
    assert f"({tmp_path / 'bench.yaml'}:3)" in printed  # a unit is located at dataset:
    assert "replay      session-" in printed or "replay      answer_" in printed  # a haystack is past talk


@pytest.mark.parametrize("extra, where, words", [
    ("  sha256: " + "ab" * 32 + "\n", ":6:11", "field 'sha256'"),
    ("  variant: m\n", ":6:12", "field 'variant'"),
])
def test_a_wrong_dataset_is_a_spec_error_at_its_field(tmp_path, capsys, extra, where, words):
    suite = _dataset_suite(tmp_path, "longmemeval", extra)
    assert cli(["run", str(suite), "--out", str(tmp_path / "run"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{suite}{where}" in err and words in err and "longmemeval_s.json" in err
    assert not (tmp_path / "run").exists()


def test_a_dataset_in_the_wrong_format_is_refused_at_load(tmp_path, capsys):
    suite = _dataset_suite(tmp_path, "longmemeval")
    write(tmp_path / "longmemeval_s.json", locomo_records())
    assert cli(["validate", str(suite)]) == 2
    assert f"{suite}:3:1" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["longmemeval", "locomo"])
def test_a_dataset_suite_runs_unit_by_unit_like_its_import(tmp_path, capsys, fmt):
    suite = _dataset_suite(tmp_path, fmt)
    assert cli(["run", str(suite), "--out", str(tmp_path / "streamed")]) == 0
    printed = capsys.readouterr()
    assert "units done" in printed.out + printed.err and "ETA" in printed.out + printed.err
    assert cli(["run", str(_imported(tmp_path, fmt, capsys)), "--out", str(tmp_path / "imported"), "--quiet"]) == 0
    streamed, imported = (read_run(str(tmp_path / d / "run.json")) for d in ("streamed", "imported"))
    # the import's include glob runs scenario files in name order, the stream in file order
    assert sorted((p.scenario, p.id, p.phase, p.hit) for p in streamed.probes) == \
        sorted((p.scenario, p.id, p.phase, p.hit) for p in imported.probes)
    assert streamed.probes and any(p.hit for p in streamed.probes)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["longmemeval", "locomo"])
def test_a_dataset_suite_runs_on_fake_cortex(tmp_path, capsys, fmt):
    suite = _dataset_suite(tmp_path, fmt)
    assert cli(["run", str(suite), "--engine", FAKE_DEF, "--out", str(tmp_path / "run"), "--quiet"]) == 0
    record = read_run(str(tmp_path / "run" / "run.json"))
    assert record.engine.name == "cortex" and {p.scenario for p in record.probes} <= set(load_suite(str(suite)).scenario_ids)


@pytest.mark.parametrize("fmt, rows", [
    ("longmemeval", ["| single-session-user | 100.0% | 1 |", "| abstention (_abs) | – | 0 |", "task-averaged"]),
    ("locomo", ["| 4 single-hop |", "| overall, without category 5 |", "Policy: overall is reported twice",
                "Category map (the file's ids): 1 multi-hop, 2 temporal"]),
])
def test_the_report_shows_the_benchmark_tables_source_and_graders(tmp_path, capsys, fmt, rows):
    suite = _dataset_suite(tmp_path, fmt)
    assert cli(["run", str(suite), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    record = read_run(str(tmp_path / "run" / "run.json"))
    assert record.benchmark is not None and record.benchmark.format == fmt and len(record.benchmark.sha256) == 64
    md = (tmp_path / "run" / "run.md").read_text()
    section = md[md.index("## Benchmark"):md.index("## KPIs")]
    assert record.benchmark.sha256 in section and "QA accuracy needs a model" in section
    assert all(g.name in section and g.upstream_commit[:12] in section for g in record.benchmark.graders)
    for row in rows:
        assert row in section
    assert "Evidence recall in the pack:" in section and "<h2>Benchmark" in (tmp_path / "run" / "run.html").read_text()
    # an abstention question is graded on the answer alone: without a model it is in no pack-level n
    abstain = [p for p in record.probes if p.abstain]
    assert abstain and all(p.invented is None and p.answer_ok is None for p in abstain)


def test_a_plain_suite_has_no_benchmark_section(tmp_path, capsys):
    assert cli(["run", os.path.join(ROOT, "tests", "fixtures", "mini.yaml"), "--out", str(tmp_path / "run"), "--quiet"]) in (0, 1)
    assert "## Benchmark" not in (tmp_path / "run" / "run.md").read_text()
    assert read_run(str(tmp_path / "run" / "run.json")).benchmark is None


def test_a_killed_dataset_run_resumes_question_by_question(tmp_path, capsys):
    suite = _dataset_suite(tmp_path, "locomo")
    out = tmp_path / "run"
    assert cli(["run", str(suite), "--out", str(out), "--quiet"]) == 0
    journal = out / "checkpoint.jsonl"
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join(lines[:3]) + "\n")  # header, then the first conversation started and finished
    capsys.readouterr()
    assert cli(["run", str(suite), "--resume", str(out)]) == 0
    printed = capsys.readouterr()
    text = printed.out + printed.err
    assert "scenario locomo-conv-26: taken from the checkpoint" in text and "scenario locomo-conv-30: running" in text
    assert "progress: 2/2 units done" in text
    assert {p.scenario for p in read_run(str(out / "run.json")).probes} == {"locomo-conv-26", "locomo-conv-30"}


@pytest.mark.parametrize("fmt, extra, where, words", [
    ("longmemeval", "  grader: longmemeval-judge\n  prompts:\n    temporal: t.txt\n", ":8:5",
     "unknown prompt key 'temporal' for longmemeval-judge (did you mean 'temporal-reasoning'?); use one of"),
    ("longmemeval", "  grader: longmemeval-judge\n  prompts:\n    abstention: missing.txt\n", ":8:17",
     "cannot read the prompt template"),
    ("locomo", "  grader: mem0-j\n  prompts:\n    temporal-reasoning: t.txt\n", ":8:5", "use one of j"),
    ("locomo", "  grader: mem0-j\n  prompts:\n    j: broken.txt\n", ":8:8", "cannot be filled ('query')"),
    ("locomo", "  grader: locomo-f1\n  prompts:\n    j: t.txt\n", ":7:3", "prompts are for a judge grader: add grader: mem0-j"),
    ("longmemeval", "  grader: locomo-f1\n", ":6:11", "locomo-f1 grades locomo questions, and this file is longmemeval: "
     "use longmemeval-judge (or memeval)"),
])
def test_a_judge_template_that_cannot_be_used_is_a_spec_error(tmp_path, capsys, fmt, extra, where, words):
    (tmp_path / "t.txt").write_text("Question: {question} {answer} {response}")
    (tmp_path / "broken.txt").write_text("Question: {query}")
    suite = _dataset_suite(tmp_path, fmt, extra)
    assert cli(["run", str(suite), "--out", str(tmp_path / "run"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{suite}{where}" in err and words in err, err
    assert not (tmp_path / "run").exists()


def test_a_judge_template_beside_the_suite_loads(tmp_path):
    (tmp_path / "t.txt").write_text("Question: {question} {answer} {response}")
    suite = load_suite(str(_dataset_suite(tmp_path, "locomo", "  grader: mem0-j\n  prompts: {j: t.txt}\n")))
    assert suite.dataset is not None and suite.dataset.prompts == (("j", str(tmp_path / "t.txt")),)
