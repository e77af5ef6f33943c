"""``--junit PATH``: the run as JUnit XML that follows the gates, so CI is red exactly when a
probe fails what the suite gates on.

**Probe cases.** One case per probe (not per probe record): named ``<probe id>`` in class
``<suite>.<scenario>``. What makes a case fail is what the suite gates on: the probe-level KPIs
(:data:`memeval.score.kpi.PROBE_METRICS`) its gates (the suite's ``gates:`` and ``--fail-under``)
name, else pack hit (synthesis). A probe fails when a gated KPI counts it and its outcome is the
bad one (a miss for an ↑ KPI; a leak or residue for a ↓ one), in any phase the KPI reads. Every
other measure — the extractive answer (a heuristic), the model answer, stale values, leaks that
no gate names — is a ``<property>`` of the case, never a failure. A failure message quotes the
expected string and the pack line nearest to it (most words in common; never a Markdown header
such as ``# Memory``). An errored probe is an ``<error>``; one the engine could not run, or that
no gated KPI counts in a phase it ran, is ``<skipped>``.

**Gate cases.** One case per gate in a ``<suite>.gates`` suite: a failure when the gate fails
(with its verdict line: "no data", or "unsupported by the engine" for a KPI whose capability the
engine lacks).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from memeval.record import ProbeResult, RunRecord
from memeval.report.gates import Gate, Verdict, check, slug
from memeval.report.html_view import verdicts
from memeval.score.kpi import METRICS_BY_NAME, ProbeMetric

DEFAULT = METRICS_BY_NAME[("accuracy", "pack hit (synthesis)")]
"""What a probe case fails on when no gate names a probe-level KPI."""
_WORD = re.compile(r"[a-z0-9]+")


def gated_metrics(gates: Sequence[Gate]) -> tuple[ProbeMetric, ...]:
    """The probe-level KPIs ``gates`` name (by slug, with or without a unit suffix), else
    (:data:`DEFAULT`,)."""
    keys = {g.kpi for g in gates}
    named = tuple(m for m in METRICS_BY_NAME.values()
                  if slug(m.name) in keys or any(k.startswith(slug(m.name) + "_") for k in keys))
    return named or (DEFAULT,)


def nearest_line(pack: str | None, expect: Sequence[str]) -> str:
    """The pack line sharing the most words with ``expect`` (the first on a tie), skipping blank
    lines and Markdown headers; ``(empty pack)`` when there is no such line, and a note before the
    first line when no line shares a word."""
    lines = [line.strip() for line in (pack or "").splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        return "(empty pack)"
    wanted = set(_WORD.findall(" ".join(expect).lower()))
    shared = [len(wanted & set(_WORD.findall(line.lower()))) for line in lines]
    best = max(range(len(lines)), key=lambda i: shared[i])
    return lines[best] if shared[best] else f"(no line shares a word with it; the first: {lines[0]})"


def _bad(metric: ProbeMetric, outcome: bool | float) -> bool:
    good = bool(outcome) if metric.kind != "mean" else float(outcome) > 0
    return good if metric.better == "down" else not good


def _properties(case: ET.Element, records: Sequence[ProbeResult]) -> None:
    props = ET.SubElement(case, "properties")
    for p in records:
        for what, verdict in verdicts(p):
            ET.SubElement(props, "property", name=f"{what.lower()} ({p.phase})", value=verdict)


def _case(suite: str, records: Sequence[ProbeResult], metrics: Sequence[ProbeMetric]) -> ET.Element:
    first = records[0]
    case = ET.Element("testcase", classname=f"{suite}.{first.scenario}", name=first.id)
    timed = [p.ms for p in records if p.ms is not None]
    if timed:  # an errored or unsupported probe was not timed: no time, rather than 0 s
        case.set("time", f"{sum(timed) / 1000:.3f}")
    _properties(case, records)  # JUnit's order: properties before the verdict
    counted = [(m, p, outcome) for m in metrics for p in records
               for outcome in m.outcomes([p]).values()]
    errored = next((p for p in records if p.status == "errored" and any(p.phase in m.phases for m in metrics)), None)
    if errored is not None:
        ET.SubElement(case, "error", message=errored.reason or "errored").text = errored.question
    elif not counted:
        reason = next((p.reason for p in records if p.status == "unsupported"), None)
        ET.SubElement(case, "skipped", message=reason or "no gated KPI counts this probe")
    else:
        failed = [(m, p) for m, p, outcome in counted if _bad(m, outcome)]
        if failed:
            m, p = failed[0]
            failure = ET.SubElement(case, "failure", message=f"{m.name}: failed ({p.phase})",
                                    type="memeval." + slug(m.name))
            failure.text = (f"question: {p.question}\nexpected: {', '.join(repr(e) for e in p.expect) or '–'}\n"
                            f"nearest pack line: {nearest_line(p.pack, p.expect or p.forbid)}")
    return case


def _gate_suite(root: ET.Element, suite: str, checked: Sequence[Verdict]) -> None:
    node = ET.SubElement(root, "testsuite", name=f"{suite}.gates", tests=str(len(checked)),
                         failures=str(sum(1 for v in checked if not v.passed)), errors="0", skipped="0")
    for v in checked:
        case = ET.SubElement(node, "testcase", classname=f"{suite}.gates", name=f"{v.gate.kpi} {v.gate.written}")
        if not v.passed:
            ET.SubElement(case, "failure", message=v.line, type="memeval.gate")


def junit_xml(record: RunRecord, gates: Sequence[Gate] = ()) -> str:
    """The JUnit XML document for a run: one <testsuite> per scenario (one case per probe, failing
    on what ``gates`` gate), then one for ``gates`` themselves when there are any."""
    metrics = gated_metrics(gates)
    root = ET.Element("testsuites", name=f"memeval {record.suite.name}")
    for scenario in dict.fromkeys(p.scenario for p in record.probes):
        by_probe: dict[str, list[ProbeResult]] = {}
        for p in record.probes:
            if p.scenario == scenario:
                by_probe.setdefault(p.id, []).append(p)
        cases = [_case(record.suite.name, records, metrics) for records in by_probe.values()]
        suite = ET.SubElement(root, "testsuite", name=f"{record.suite.name}.{scenario}", tests=str(len(cases)),
                              failures=str(sum(1 for c in cases if c.find("failure") is not None)),
                              errors=str(sum(1 for c in cases if c.find("error") is not None)),
                              skipped=str(sum(1 for c in cases if c.find("skipped") is not None)))
        suite.extend(cases)
    if gates:
        _gate_suite(root, record.suite.name, check(gates, record.kpis))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
