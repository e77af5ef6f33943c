"""Disputed gold, scored apart: an errata file a suite declares is validated like every memeval
YAML (file:line:col), its questions are left out of the headline rates (with n) and reported on
their own with the ceiling, run.json records the file by sha256 and count, the setup fingerprint
moves with it, and an id naming nothing is a warning (an error under ``validate --strict``)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from memeval.report.files import read_run
from memeval.score.setup import fingerprint, flatten, setup_of
from memeval.spec.load import load_suite
from tests.conftest import FIXTURES, cli
from tests.datasets.files import locomo_records, write

EXAMPLE = Path(FIXTURES) / "errata" / "locomo-example.yaml"


def _suite(tmp_path: Path, errata: str | None = EXAMPLE.read_text()) -> Path:
    write(tmp_path / "locomo10.json", locomo_records())
    line = ""
    if errata is not None:
        (tmp_path / "errata.yaml").write_text(errata)
        line = "  errata: errata.yaml\n"
    suite = tmp_path / "bench.yaml"
    suite.write_text(f"suite: lc\nabout: errata\ndataset:\n  format: locomo\n  path: locomo10.json\n{line}")
    return suite


def test_the_example_resolves_to_the_probes_the_dataset_runs(tmp_path):
    errata = load_suite(str(_suite(tmp_path))).errata
    assert errata is not None and errata.covers == "locomo10 (test file)" and len(errata.entries) == 2
    assert [(s, p) for s, p, _ in errata.disputed] == [("locomo-conv-26", "conv-26-q1"), ("locomo-conv-30", "conv-30-q1")]
    assert errata.sha256 == hashlib.sha256(EXAMPLE.read_bytes()).hexdigest() and not errata.unknown


def test_a_broken_errata_file_is_a_spec_error_at_its_line_and_column(tmp_path, capsys):
    broken = EXAMPLE.read_text().replace("    source: \"example: tests/datasets/files.py (synthetic; not a published "
                                         "dispute)\"\n", "", 1).replace("reason: Both", "reasn: Both")
    suite = _suite(tmp_path, broken)
    assert cli(["validate", str(suite)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'errata.yaml'}:7:5  questions[0]: missing required key 'source'" in err
    assert "unknown key 'reasn' (did you mean 'reason'?)" in err


def test_an_unknown_id_is_a_warning_and_an_error_under_strict(tmp_path, capsys):
    suite = _suite(tmp_path, EXAMPLE.read_text().replace("id: conv-30-q1", "id: conv-99-q1"))
    assert cli(["validate", str(suite)]) == 0
    err = capsys.readouterr().err
    assert f"{tmp_path / 'errata.yaml'}:10:5  questions[1]: warning: erratum 'conv-99-q1' names no question" in err
    assert cli(["validate", "--strict", str(suite)]) == 2
    assert "erratum 'conv-99-q1' names no question" in capsys.readouterr().err
    out = tmp_path / "run"
    assert cli(["run", str(suite), "--out", str(out), "--quiet"]) == 0
    assert "warning:" in capsys.readouterr().err
    record = json.loads((out / "run.json").read_text())
    assert record["errata"]["unknown"] == ["conv-99-q1"] and len(record["errata"]["disputed"]) == 1
    assert "Warning: 1 errata id(s) name no question" in (out / "run.md").read_text()


def test_disputed_questions_are_scored_apart_with_the_ceiling(tmp_path, capsys):
    plain, disputed = tmp_path / "plain", tmp_path / "disputed"
    plain.mkdir(), disputed.mkdir()
    assert cli(["run", str(_suite(plain, None)), "--out", str(plain / "run"), "--quiet"]) == 0
    assert cli(["run", str(_suite(disputed)), "--out", str(disputed / "run"), "--quiet"]) == 0
    base, run = read_run(str(plain / "run" / "run.json")), read_run(str(disputed / "run" / "run.json"))
    assert base.errata is None and run.errata is not None
    assert (run.errata.sha256, run.errata.count) == (hashlib.sha256(EXAMPLE.read_bytes()).hexdigest(), 2)
    kpi = {k.name: k for k in run.kpis}
    every = {k.name: k for k in base.kpis}
    hit = next(r for r in run.errata.results if r.kpi == "pack hit (synthesis)")
    assert kpi["pack hit (synthesis)"].n == every["pack hit (synthesis)"].n - 2 == hit.n - hit.disputed
    assert hit.clean_k + hit.disputed_k == round(every["pack hit (synthesis)"].value * every["pack hit (synthesis)"].n / 100)
    assert hit.ceiling == round((hit.n - 2) / hit.n, 4)
    marked = {(p.scenario, p.id) for p in run.probes if p.disputed}
    assert marked == {("locomo-conv-26", "conv-26-q1"), ("locomo-conv-30", "conv-30-q1")}
    text = (disputed / "run" / "run.md").read_text()
    assert "Disputed gold: 2 probe(s) named by the errata file `errata.yaml`" in text
    assert f"- pack hit (synthesis): headline {100 * hit.clean_k / (hit.n - 2):.1f}% (n = {hit.n - 2}, 2 disputed left out)" in text
    assert "ceiling 75.0% = (8 − 2) / 8" in text  # beside the benchmark's accuracy table
    # the errata file is part of the scoring setup: compare refuses the pair and names the field
    assert fingerprint(setup_of(base)) != fingerprint(setup_of(run))
    assert flatten(setup_of(run))["errata.count"] == 2
    assert cli(["compare", str(plain / "run" / "run.json"), str(disputed / "run" / "run.json")]) == 2
    assert "errata" in capsys.readouterr().err


def test_a_scenario_suite_names_probes_by_scenario_and_id(tmp_path):
    shutil.copy(Path(FIXTURES) / "mini.yaml", tmp_path / "mini.yaml")
    text = (tmp_path / "mini.yaml").read_text()
    suite = load_suite(str(tmp_path / "mini.yaml"))
    first = suite.scenarios[0]
    target = f"{first.id}/{first.probes[0].id}"
    (tmp_path / "errata.yaml").write_text(f"errata: mini\nquestions:\n  - id: {target}\n    source: example\n"
                                          "    reason: an example dispute\n")
    (tmp_path / "mini.yaml").write_text(text.replace("suite: mini", "suite: mini\nerrata: errata.yaml", 1))
    errata = load_suite(str(tmp_path / "mini.yaml")).errata
    assert errata is not None and [(s, p) for s, p, _ in errata.disputed] == [(first.id, first.probes[0].id)]
    assert load_suite(str(tmp_path / "mini.yaml")).sha256 != suite.sha256  # the file is part of the suite's hash


def test_an_imported_suite_names_the_same_questions_by_question_id(tmp_path, capsys):
    streamed = load_suite(str(_suite(tmp_path))).errata
    assert cli(["import", "locomo", str(tmp_path / "locomo10.json"), "-o", str(tmp_path / "lc")]) == 0
    capsys.readouterr()
    shutil.copy(EXAMPLE, tmp_path / "lc" / "errata.yaml")
    suite = tmp_path / "lc" / "suite.yaml"
    suite.write_text(suite.read_text().replace("suite:", "errata: errata.yaml\nsuite:", 1))
    imported = load_suite(str(suite)).errata
    assert streamed is not None and imported is not None
    assert [(s, p) for s, p, _ in imported.disputed] == [(s, p) for s, p, _ in streamed.disputed]


def test_an_errata_file_validates_on_its_own(tmp_path, capsys):
    assert cli(["validate", str(EXAMPLE)]) == 0
    assert "ok (errata locomo10 (test file): 2 disputed questions)" in capsys.readouterr().out
    (tmp_path / "bad.yaml").write_text("errata: x\nquestions: []\n")
    assert cli(["validate", str(tmp_path / "bad.yaml")]) == 2
    assert f"{tmp_path / 'bad.yaml'}:2:12  questions:" in capsys.readouterr().err


def test_two_errata_files_are_refused(tmp_path, capsys):
    suite = _suite(tmp_path)
    suite.write_text(suite.read_text() + "errata: errata.yaml\n")
    assert cli(["validate", str(suite)]) == 2
    assert f"{suite}:7:9  errata: declare one errata file" in capsys.readouterr().err
