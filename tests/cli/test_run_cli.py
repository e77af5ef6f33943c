"""`memeval run` end to end on the reference engine: run.json is valid against its schema, the
report is written, nothing is left in the engine, probes never see each other's questions, no run
replaces another run's record, and a command line that cannot work is refused (exit 2)."""

import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from memeval.engines.reference.engine import create
from memeval.record import Cleanup
from memeval.report.files import read_run
from memeval.runner.options import RunOptions
from memeval.runner.suite import run_suite
from memeval.spec.load import load_suite
from memeval.spec.validate import schema
from tests.conftest import FIXTURES, MEMEVAL, cli
from tests.cli.test_exit_codes import dead_url

MINI = os.path.join(FIXTURES, "mini.yaml")


@pytest.fixture(scope="module")
def mini_run(tmp_path_factory) -> Path:
    """One ``memeval run`` of the mini fixture, shared by the tests that only read its output."""
    out = tmp_path_factory.mktemp("mini-run")
    assert cli(["run", MINI, "--out", str(out), "--quiet"]) == 0
    return out


def test_run_writes_a_schema_valid_record_and_report(mini_run):
    record = read_run(str(mini_run / "run.json"))
    jsonschema.Draft202012Validator(schema("run")).validate(record.to_json())
    assert record.format_version == 2 and len(record.suite.sha256) == 64
    assert {p.status for p in record.probes} == {"scored"}
    assert all((p.pack or "").startswith(("# Memory", "---")) for p in record.probes)
    assert all(s.cleanup.forgotten for s in record.scenarios)
    report = (mini_run / "run.md").read_text()
    assert "## Accuracy" in report and "## KPIs" in report and "## Latency (ms)" in report


def test_bad_usage_exits_2_with_a_clear_line(tmp_path, capsys):
    assert cli(["run", MINI, "--only", "ofice", "--out", str(tmp_path)]) == 2
    assert "did you mean 'office'" in capsys.readouterr().err
    assert cli(["run", MINI, "--label", "../escape"]) == 2
    assert capsys.readouterr().err.startswith("error: --label '../escape': use letters, digits")
    assert cli(["run", MINI, "--engine", "nosuch"]) == 2
    assert capsys.readouterr().err.startswith("error: --engine: unknown engine 'nosuch'; known: ")


def test_forget_all_leaves_every_tenant_empty():
    suite = load_suite(MINI)
    engine = create({"embedder": "none"})
    record = run_suite(suite, engine, RunOptions(label="t"))
    tenants = [ns for scenario in record.scenarios for ns in scenario.tenants.values()]
    assert tenants, "the run names no tenant: nothing to check"
    for ns in tenants:
        assert engine.page(ns).items == ()


def test_keep_leaves_the_data():
    engine = create({"embedder": "none"})
    record = run_suite(load_suite(MINI), engine, RunOptions(label="t", keep=True))
    tenants = record.scenarios[0].tenants
    assert engine.page(tenants["acme"]).items
    assert record.scenarios[0].cleanup == Cleanup(forgotten=False, reason="kept (--keep)")


@pytest.mark.parametrize("mode", ["read_only", "isolated"])
def test_a_probe_question_never_reaches_another_probes_pack(mode):
    suite = load_suite(MINI)
    suite = suite.__class__(**{**suite.__dict__, "agent": suite.agent.__class__(probe_questions=mode)})
    record = run_suite(suite, create({"embedder": "none"}), RunOptions(label="t"))
    questions = {p.question for p in record.probes}
    for probe in record.probes:
        for question in questions:
            assert question not in (probe.pack or ""), (mode, probe.id, question)


def test_the_forgetting_probe_sees_no_residue_and_leaks_are_caught():
    suite = load_suite(MINI)
    record = run_suite(suite, create({"embedder": "none"}), RunOptions(label="t"))
    forgot = next(p for p in record.probes if p.id == "forgot-vault")
    assert forgot.invented is False and "7741" not in (forgot.pack or "")
    # The same suite without its forget step: the document is still there and the probe must say so.
    unforgotten = replace(suite, scenarios=tuple(replace(s, forget=()) for s in suite.scenarios))
    record = run_suite(unforgotten, create({"embedder": "none"}), RunOptions(label="t"))
    leaked = next(p for p in record.probes if p.id == "forgot-vault")
    assert "7741" in (leaked.pack or "") and leaked.invented is True
    assert leaked.answer_ok is False


def test_html_report_escapes_untrusted_pack_text(mini_run):
    from memeval.report.render import render

    assert (mini_run / "run.html").exists()
    record = read_run(str(mini_run / "run.json"))
    first = replace(record.probes[0], pack="# Memory\n- <script>alert('x')</script>")
    html = render(replace(record, probes=(first, *record.probes[1:])), "run.html.j2")
    assert "<script>alert" not in html and "&lt;script&gt;alert" in html
    assert html.startswith("<!doctype html>") and "<h2>KPIs</h2>" in html



# -- no run replaces another's record -------------------------------------------------------------

def test_each_run_gets_its_own_folder_and_latest_names_the_newest(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli(["run", MINI, "--quiet", "--only", "office"]) == 0
    assert cli(["run", MINI, "--quiet", "--only", "office"]) == 0
    base = tmp_path / "runs" / "reference"
    runs = sorted(p.name for p in base.iterdir() if not p.is_symlink())
    records = [read_run(str(base / name / "run.json")) for name in runs]
    assert len(runs) == 2 and [r.run_id for r in records] == runs
    assert os.readlink(base / "latest") == max(runs, key=lambda n: os.path.getmtime(base / n / "run.json"))
    assert capsys.readouterr().err.splitlines()[-1] == f"wrote runs/reference/{os.readlink(base / 'latest')}/run.json, run.md and run.html"


def test_out_holding_another_run_is_refused_unless_force(tmp_path, capsys):
    out = tmp_path / "out"
    assert cli(["run", MINI, "--out", str(out), "--quiet"]) == 0
    first = (out / "run.json").read_bytes()
    capsys.readouterr()
    assert cli(["run", MINI, "--out", str(out), "--quiet"]) == 2
    assert capsys.readouterr().err == (f"error: --out {out}: already holds a run (run.json); --resume {out} continues it, "
                                       "--force replaces it, or name another folder\n")
    assert (out / "run.json").read_bytes() == first
    assert cli(["run", MINI, "--out", str(out), "--quiet", "--force"]) == 0
    assert read_run(str(out / "run.json")).run_id != json.loads(first)["run_id"]


def test_json_onto_a_file_that_is_not_this_runs_record_is_refused(tmp_path, capsys):
    spec = tmp_path / "suite.yaml"
    spec.write_text(Path(MINI).read_text())
    before = spec.read_bytes()
    assert cli(["run", str(spec), "--out", str(tmp_path / "a"), "--json", str(spec), "--quiet"]) == 2
    assert "exists and is not a run.json" in capsys.readouterr().err and spec.read_bytes() == before
    assert not (tmp_path / "a").exists()  # refused before anything ran or was created
    other = tmp_path / "other.json"
    assert cli(["run", MINI, "--out", str(tmp_path / "b"), "--json", str(other), "--quiet"]) == 0
    held = other.read_bytes()
    capsys.readouterr()
    assert cli(["run", MINI, "--out", str(tmp_path / "c"), "--json", str(other), "--quiet"]) == 2
    assert f"holds the record of run {json.loads(held)['run_id']}" in capsys.readouterr().err
    assert other.read_bytes() == held
    assert cli(["run", MINI, "--out", str(tmp_path / "d"), "--json", str(other), "--quiet", "--force"]) == 0
    assert json.loads(other.read_bytes())["run_id"] == read_run(str(tmp_path / "d" / "run.json")).run_id


def test_json_of_the_same_run_is_rewritten_by_its_resume(tmp_path):
    out, copy = tmp_path / "out", tmp_path / "copy.json"
    assert cli(["run", MINI, "--out", str(out), "--json", str(copy), "--quiet"]) == 0
    assert cli(["run", MINI, "--resume", str(out), "--json", str(copy), "--quiet"]) == 0
    assert read_run(str(copy)).run_id == read_run(str(out / "run.json")).run_id


# -- command lines that cannot work ---------------------------------------------------------------

@pytest.mark.parametrize(("option", "value", "needs"), [
    ("--settle-timeout", "nan", "> 0"), ("--settle-timeout", "0", "> 0"), ("--settle-timeout", "-1", "> 0"),
    ("--settle-timeout", "inf", "> 0"), ("--enrich-wait", "nan", ">= 0"), ("--enrich-wait", "-0.5", ">= 0"),
    ("--enrich-wait", "soon", None),
])
def test_a_number_the_option_cannot_mean_is_refused(option, value, needs, tmp_path, capsys):
    assert cli(["run", MINI, option, value, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    expected = f"give a finite number of seconds {needs}" if needs else "is not a number of seconds"
    assert f"Invalid value for '{option}': '{value}'" in err and expected in err, err
    assert not (tmp_path / "out").exists()


def test_zero_enrich_wait_is_a_valid_cap(tmp_path):
    assert cli(["run", MINI, "--enrich-wait", "0", "--out", str(tmp_path), "--quiet", "--only", "office"]) == 0
    assert read_run(str(tmp_path / "run.json")).options.enrich_wait_s == 0


@pytest.mark.parametrize("label", ["a\nb", "run\n", "tab\there", "nul\x00", "esc\x1b[31m", "a/b", "a\\b", ".."])
def test_a_label_with_control_characters_or_separators_is_refused(label, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli(["run", MINI, "--label", label]) == 2
    assert capsys.readouterr().err.startswith(f"error: --label {label!r}: use letters, digits")
    assert not (tmp_path / "runs").exists()


def test_resume_against_another_scope_names_it_readably(tmp_path, capsys):
    out = tmp_path / "out"
    assert cli(["run", MINI, "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert cli(["run", MINI, "--resume", str(out), "--only", "office", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "the run used every scenario (no --only), this one --only office;" in err and "[]" not in err


# -- the answerer -------------------------------------------------------------------------------

@pytest.mark.slow
def test_an_unreachable_model_endpoint_exits_3_with_the_reason(tmp_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text(Path(MINI).read_text() + "llm: {retries: 0, timeout_s: 2}\n")
    url = dead_url()
    env = {**os.environ, "EVAL_LLM_URL": f"{url}/v1", "EVAL_LLM_KEY": "", "OPENROUTER_API_KEY": ""}
    proc = subprocess.run([*MEMEVAL, "run", str(suite), "--llm", "--out", str(tmp_path / "out"), "--quiet"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stderr
    line = f"error: answerer: 15 of 15 model calls failed (cannot connect to {url}/v1 (after 1 attempts)); results written"
    assert proc.stderr.splitlines()[-1] == line, proc.stderr
    assert not any(row.startswith("answerer: ") for row in proc.stderr.splitlines())  # --quiet: no tally
    assert read_run(str(tmp_path / "out" / "run.json")).answerer.failed == 15
