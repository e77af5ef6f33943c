"""`memeval run` end to end on the reference engine: run.json is valid against its schema, the
report is written, nothing is left in the engine, and probes never see each other's questions."""

import os
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from memeval.engines.reference import create
from memeval.record import Cleanup
from memeval.report.files import read_run
from memeval.run.options import RunOptions
from memeval.run.suite import run_suite
from memeval.spec.load import load_suite
from memeval.spec.validate import schema
from tests.conftest import FIXTURES, cli

MINI = os.path.join(FIXTURES, "mini.yaml")


@pytest.fixture(scope="module")
def mini_run(tmp_path_factory) -> Path:
    """One ``memeval run`` of the mini fixture, shared by the tests that only read its output."""
    out = tmp_path_factory.mktemp("mini-run")
    with pytest.MonkeyPatch.context() as patch:  # hermetic like every test (the autouse fixture is per test)
        patch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        patch.setenv("HF_HUB_OFFLINE", "1")
        assert cli(["run", MINI, "--out", str(out), "--quiet"]) == 0
    return out


def test_run_writes_a_schema_valid_record_and_report(mini_run):
    record = read_run(str(mini_run / "run.json"))
    jsonschema.Draft202012Validator(schema("run")).validate(record.to_json())
    assert record.format_version == 1 and len(record.suite.sha256) == 64
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
        assert engine.list(ns).items == ()


def test_keep_leaves_the_data():
    engine = create({"embedder": "none"})
    record = run_suite(load_suite(MINI), engine, RunOptions(label="t", keep=True))
    tenants = record.scenarios[0].tenants
    assert engine.list(tenants["acme"]).items
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
    record = run_suite(load_suite(MINI), create({"embedder": "none"}), RunOptions(label="t"))
    forgot = next(p for p in record.probes if p.id == "forgot-vault")
    assert forgot.invented is False and "7741" not in (forgot.pack or "")


def test_html_report_escapes_untrusted_pack_text(mini_run):
    from memeval.report.render import render

    assert (mini_run / "run.html").exists()
    record = read_run(str(mini_run / "run.json"))
    first = replace(record.probes[0], pack="# Memory\n- <script>alert('x')</script>")
    html = render(replace(record, probes=(first, *record.probes[1:])), "run.html.j2")
    assert "<script>alert" not in html and "&lt;script&gt;alert" in html
    assert html.startswith("<!doctype html>") and "<h2>KPIs</h2>" in html

