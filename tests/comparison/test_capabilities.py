"""Issue 30, point 3: capabilities decide which KPIs exist. A KPI that needs a capability the
engine lacks is unsupported in run.json, run.md, run.html, compare and gates — never a latency,
a 0 or a "−100%" — and the "Unsupported by the engine" table lists every such KPI."""

from __future__ import annotations

import os

import pytest

from memeval.comparison import compare_records, render_comparison
from memeval.record import RunRecord, TenantDerived
from memeval.report.files import read_run
from memeval.report.gates import check, parse
from tests.comparison.factory import hits, run, scenario
from tests.conftest import FIXTURES, cli

BELIEF_KPIS = ("beliefs built", "beliefs held", "beliefs not supported", "belief confidence", "belief builds")


def _kpi(record: RunRecord, name: str):
    return next(k for k in record.kpis if k.name == name)


def _inspected_without_beliefs() -> RunRecord:
    """An engine like mem0 or Graphiti: it can be inspected (no beliefs in it), never builds."""
    s = scenario("s")
    s = s.__class__(**{**s.__dict__, "synthesis": s.synthesis.__class__(
        derived={"t": TenantDerived(("a fact",), (), None, {}, ())})})
    return run(hits(18, 20), label="mem0-like", scenarios=[s], timings={"synthesis (all builds)": [0.15]},
               capabilities=("forget", "inspect"))


def test_an_engine_without_beliefs_holds_no_zero_and_builds_in_no_time():
    record = _inspected_without_beliefs()
    for name in BELIEF_KPIS:
        k = _kpi(record, name)
        assert (k.value, k.n, k.unsupported) == (None, 0, "beliefs"), name
    assert _kpi(record, "facts held").value == 1  # what it can have stays a number
    beliefs = next(m for m in record.engine_unsupported if m.capability == "beliefs")
    assert set(beliefs.kpis) == set(BELIEF_KPIS)


def test_compare_says_unsupported_instead_of_minus_100_percent():
    built = run(hits(18, 20), label="reference", scenarios=[scenario("s", built=121)],
                timings={"synthesis (all builds)": [18.9]})
    comparison = compare_records([built, _inspected_without_beliefs()])
    text = render_comparison(comparison)
    assert "-100%" not in text and "-99%" not in text
    assert "unsupported (no beliefs)" in text
    moved = [m["name"] for ms in comparison["moved"].values() for m in ms]
    assert not set(BELIEF_KPIS) & set(moved)


def test_a_gate_on_an_unsupported_kpi_fails_saying_so():
    gate = parse("beliefs_held", ">= 0", "suite.yaml")
    [verdict] = check([gate], _inspected_without_beliefs().kpis)
    assert not verdict.passed and "unsupported by the engine (no beliefs)" in verdict.line


@pytest.mark.slow
def test_a_rag_baseline_run_reports_belief_kpis_unsupported_in_every_report(tmp_path, capsys):
    out = tmp_path / "rag"
    cli(["run", os.path.join(FIXTURES, "mini.yaml"), "--engine", "rag-baseline", "--out", str(out), "--quiet"])
    record = read_run(str(out / "run.json"))
    assert "synthesis (all builds)" not in {str(label) for label in record.timings}
    for name in BELIEF_KPIS:
        assert _kpi(record, name).unsupported == "beliefs"
    md = (out / "run.md").read_text()
    table = md.split("## Unsupported by the engine")[1].split("##")[0]
    beliefs_row = next(line for line in table.splitlines() if line.startswith("| beliefs |"))
    assert all(name in beliefs_row for name in BELIEF_KPIS)
    html = (out / "run.html").read_text()
    assert "unsupported (no beliefs)" in html and "unsupported (no beliefs)" in md
