"""Issue 30, point 6: JUnit follows the gates. One case per probe, failing on what the suite
gates on (pack hit by default); heuristic measures are properties, not failures, unless a gate
names them; a failure quotes the expected string and the nearest pack line, never a header."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

import memeval
from memeval.record import RunRecord
from memeval.report.gates import parse
from memeval.report.junit import junit_xml, nearest_line
from tests.comparison.factory import hits, probe, run
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def reference_run() -> RunRecord:
    """A real run of the flagship suite on the reference engine, in this process."""
    return memeval.run(f"{ROOT}/specs/agent-memory.yaml", engine="reference")


def _cases(xml: str) -> list[ET.Element]:
    return ET.fromstring(xml).findall(".//testcase")


def _kpi(record: RunRecord, name: str):
    return next(k for k in record.kpis if k.name == name)


def test_by_default_a_case_fails_exactly_on_a_synthesis_pack_miss(reference_run):
    cases = [c for c in _cases(junit_xml(reference_run)) if not c.get("classname", "").endswith(".gates")]
    hit = _kpi(reference_run, "pack hit (synthesis)")
    failed = [c for c in cases if c.find("failure") is not None]
    assert len(cases) == len({(p.scenario, p.id) for p in reference_run.probes})  # one case per probe
    assert len(failed) == round(hit.n * (1 - hit.value / 100))  # the KPI's misses, no more
    for case in failed:
        failure = case.find("failure")
        assert failure.get("type") == "memeval.pack_hit_synthesis"
        text = failure.text or ""
        assert "expected: '" in text
        nearest = text.split("nearest pack line: ")[1]
        assert not nearest.startswith("#")
    extractive = [p for c in cases for p in c.iter("property") if p.get("name") == "extractive answer (synthesis)"]
    assert any(p.get("value") == "wrong" for p in extractive)  # a heuristic miss is still shown, as a property


def test_a_gate_naming_the_extractive_answer_makes_its_misses_failures(reference_run):
    gates = [parse("extractive_answer", ">= 0.5", "s.yaml", reference_run.kpis)]
    cases = _cases(junit_xml(reference_run, gates))
    types = {c.find("failure").get("type") for c in cases if c.find("failure") is not None}
    assert "memeval.extractive_answer" in types and "memeval.pack_hit_synthesis" not in types
    [gate] = [c for c in cases if c.get("classname", "").endswith(".gates")]
    assert gate.get("name") == "extractive_answer >= 0.5"


def test_a_gate_on_a_kpi_the_engine_cannot_have_fails_saying_unsupported():
    record = run(hits(9, 10), capabilities=("forget",))
    xml = junit_xml(record, [parse("beliefs_held", ">= 1", "s.yaml", record.kpis)])
    [gate] = [c for c in _cases(xml) if c.get("classname", "").endswith(".gates")]
    assert "unsupported by the engine (no beliefs)" in gate.find("failure").get("message")


def test_the_nearest_line_is_never_a_header_and_shares_the_most_words():
    pack = "# Memory\n\n## Brain\n- the user likes tea\n- the user works at Verdant Foods since May\n"
    assert nearest_line(pack, ["Verdant Foods"]) == "- the user works at Verdant Foods since May"
    assert nearest_line("# Memory\n", ["x"]) == "(empty pack)"
    assert nearest_line("# Memory\n- nothing here\n", ["Verdant"]).startswith("(no line shares a word")
    record = run([probe("p", hit=False, expect=("Verdant Foods",))])
    failure = _cases(junit_xml(record))[0].find("failure")
    assert "nearest pack line: (empty pack)" in failure.text and "# Memory" not in failure.text
