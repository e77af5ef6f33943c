"""``--junit PATH``: the run as JUnit XML, one test case per probe record, so CI shows each probe.

A case is named ``<probe id> (<phase>)`` in class ``<suite>.<scenario>``. A probe whose outcome
is a miss (pack or answer miss, stale value first, leak, invented answer; see
:func:`memeval.report.html_view.outcomes`) is a ``<failure>`` carrying the verdicts in words and
the pack's best line; an errored probe is an ``<error>``, an unsupported one ``<skipped>``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from memeval.record import ProbeResult, RunRecord
from memeval.report.html_view import OUTCOMES, outcomes, verdicts


def best_line(p: ProbeResult) -> str:
    """The extractive answer (the pack's best line), else the pack's first non-empty line."""
    if p.answer:
        return p.answer
    return next((line.strip() for line in (p.pack or "").splitlines() if line.strip()), "(empty pack)")


def _case(suite: str, p: ProbeResult) -> ET.Element:
    case = ET.Element("testcase", classname=f"{suite}.{p.scenario}", name=f"{p.id} ({p.phase})")
    if p.ms is not None:  # an errored or unsupported probe was not timed: no time, rather than 0 s
        case.set("time", f"{p.ms / 1000:.3f}")
    if p.status == "errored":
        ET.SubElement(case, "error", message=p.reason or "errored").text = p.question
    elif p.status == "unsupported":
        ET.SubElement(case, "skipped", message=p.reason or "unsupported by this engine")
    elif outcomes(p):
        words = "; ".join(f"{what}: {verdict}" for what, verdict in verdicts(p))
        failure = ET.SubElement(case, "failure", message=", ".join(OUTCOMES[o] for o in outcomes(p)),
                                type="memeval." + "+".join(outcomes(p)))
        failure.text = f"question: {p.question}\n{words}\nexpected: {', '.join(p.expect) or '–'}\n" \
                       f"best line: {best_line(p)}"
    return case


def junit_xml(record: RunRecord) -> str:
    """The JUnit XML document for a run (one <testsuite> per scenario)."""
    root = ET.Element("testsuites", name=f"memeval {record.suite.name}")
    for scenario in dict.fromkeys(p.scenario for p in record.probes):
        probes = [p for p in record.probes if p.scenario == scenario]
        cases = [_case(record.suite.name, p) for p in probes]
        suite = ET.SubElement(root, "testsuite", name=f"{record.suite.name}.{scenario}", tests=str(len(cases)),
                              failures=str(sum(1 for c in cases if c.find("failure") is not None)),
                              errors=str(sum(1 for c in cases if c.find("error") is not None)),
                              skipped=str(sum(1 for c in cases if c.find("skipped") is not None)))
        suite.extend(cases)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
