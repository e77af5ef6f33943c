"""CI use of memeval run: gates (suite YAML and --fail-under), JUnit, --format json; the chart
helpers' contracts (no data is words, never a bar; labels escaped; Pareto)."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from memeval.errors import UsageError
from memeval.record import Kpi
from memeval.report.charts import Point, RateBar, Series, pareto, rate_chart
from memeval.report.files import read_run
from memeval.report.gates import check, parse, parse_fail_under, slug
from memeval.report.html_view import marked
from memeval.report.junit import junit_xml
from tests.conftest import FIXTURES, cli

RECORDS = os.path.join(FIXTURES, "records")
MINI = os.path.join(FIXTURES, "mini.yaml")


def _kpi(name: str, value: float | None, unit: str = "pct", better: str | None = "up") -> Kpi:
    return Kpi("accuracy", name, value, unit, better, 10, None)  # type: ignore[arg-type]


def test_gate_keys_conditions_and_no_data() -> None:
    kpis = (_kpi("pack hit (synthesis)", 80.0), _kpi("pre_turn p95", None, "ms", "down"), _kpi("leaks", 0, "count", "down"))
    assert slug("engine models $") == "engine_models_usd" and slug("pack tokens (mean)") == "pack_tokens_mean"
    gates = [parse("pack_hit_synthesis", ">= 0.9", "s.yaml", kpis), parse("leaks", "== 0", "s.yaml", kpis),
             parse("pre_turn_p95_ms", "<= 50", "s.yaml", kpis), parse_fail_under("pack_hit_synthesis=75%", kpis)]
    assert gates[0].threshold == pytest.approx(90.0) and gates[3].op == ">=" and gates[3].threshold == 75
    assert parse_fail_under("pre_turn_p95=50", kpis).op == "<="  # worse means above for a ↓ KPI
    verdicts = check(gates, kpis)
    assert [v.passed for v in verdicts] == [False, True, False, True]
    assert "no data" in verdicts[2].line  # no data never passes
    with pytest.raises(UsageError, match="did you mean 'pack_hit_synthesis'"):
        parse("pack_hit_synthsis", ">= 0.9", "s.yaml", kpis)
    with pytest.raises(UsageError, match="fraction"):
        parse("pack_hit_synthesis", ">= 90", "s.yaml", kpis)


def test_junit_has_one_case_per_probe_and_failures_say_why() -> None:
    record = read_run(os.path.join(RECORDS, "mini-llm.json"))
    root = ET.fromstring(junit_xml(record))
    cases = root.findall(".//testcase")
    probes = list(dict.fromkeys((p.scenario, p.id) for p in record.probes))
    assert len(cases) == len(probes)  # one case per probe; it fails on a synthesis pack miss (the default gate)
    for key, case in zip(probes, cases):
        failure = case.find("failure")
        missed = any(p.key[:2] == key and p.phase == "synthesis" and p.hit is False and not p.abstain
                     for p in record.probes)
        assert (failure is not None) is missed, key
        if failure is not None:
            assert "nearest pack line: " in (failure.text or "") and "True" not in (failure.text or "")


def test_marks_use_the_matcher_and_escape_the_rest() -> None:
    text = "Fee <b>6,500 yen</b>; old fee 5,000 yen"
    out = str(marked(text, [("expect", ["6500 yen"]), ("stale", ["5000 yen"])], "word"))
    assert out == ('Fee &lt;b&gt;<mark class="expect">6,500 yen</mark>&lt;/b&gt;; old fee '
                   '<mark class="stale">5,000 yen</mark>')


def test_charts_say_no_data_and_escape_labels() -> None:
    svg = str(rate_chart("t", ["<x>", "b"], [Series("s", (RateBar(3, 4), RateBar(0, 0)))]))
    assert "&lt;x&gt;" in svg and "<x>" not in svg and "no data" in svg and 'class="whisker"' in svg
    points = [Point("a", 90, 5, 100), Point("b", 80, 6, 120), Point("c", 95, 9, 90), Point("d", None, 1, 1)]
    assert pareto(points) == {"a", "c"}  # b loses on all three to a; d has no data


def test_run_gates_junit_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "gated.yaml"
    suite.write_text(Path(MINI).read_text(encoding="utf-8").replace("../../memeval", str(Path(FIXTURES).parent.parent / "memeval"))
                     + "gates: {pack_hit_synthesis: \">= 0.5\", leaks: \"== 0\"}\n", encoding="utf-8")
    junit = tmp_path / "junit.xml"
    code = cli(["run", str(suite), "--out", str(tmp_path / "run"), "--junit", str(junit), "--format", "json",
                "--fail-under", "extractive_answer=0.99"])
    out, err = capsys.readouterr()
    assert code == 1
    summary = json.loads(out)
    # mini checks no leaks, so the leaks gate has no data and fails; the extractive rate is 71%
    assert summary["outcome"] == "gate" and [g["passed"] for g in summary["gates"]] == [True, False, False]
    assert "no data" in summary["gates"][1]["line"]
    failed = [line for line in err.splitlines() if line.startswith("gate failed")]
    assert failed == [g["line"] for g in summary["gates"][1:]]
    gate_cases = len(summary["gates"])  # one case per probe and one per gate
    probes = {(p.scenario, p.id) for p in read_run(str(tmp_path / "run" / "run.json")).probes}
    assert len(ET.parse(junit).getroot().findall(".//testcase")) == len(probes) + gate_cases
    assert (tmp_path / "run" / "run.html").read_text(encoding="utf-8").count("<svg") >= 5
    bad = tmp_path / "typo.yaml"
    bad.write_text(suite.read_text(encoding="utf-8").replace("pack_hit_synthesis:", "pack_hit_synthsis:"), encoding="utf-8")
    assert cli(["run", str(bad), "--out", str(tmp_path / "run2")]) == 2
    assert "did you mean 'pack_hit_synthesis'" in capsys.readouterr().err
