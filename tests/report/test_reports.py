"""Every text a person reads, held by golden files and rendered from CHECKED-IN run records
(tests/fixtures/records/), so the goldens move only when the rendering does, never when an
engine ranks differently: run.md (a plain and an answered, judged run), a sweep's summary.md and
the compare text over that sweep's cells. run.html is checked by parsing it.

The records were produced once by real runs: ``memeval run tests/fixtures/mini.yaml`` on the
reference engine, the same with ``--llm --judge`` against the mock inference server, and a
``memeval sweep`` of the fake CortexDB (baseline, no-graph, salience-high, writes-fail; two
repeats). ``pytest --update-goldens`` rewrites the goldens after a deliberate change.
"""

from __future__ import annotations

import glob
from dataclasses import replace
import json
import os
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from memeval.comparison import compare_files, render_comparison
from memeval.record import RunRecord
from memeval.report.files import read_run
from memeval.report.render import render
from memeval.sweep.summary import write_summary
from tests.conftest import FIXTURES, cli

RECORDS = os.path.join(FIXTURES, "records")
SWEEP = os.path.join(RECORDS, "sweep")
Golden = Callable[[str, str], None]


def _record(name: str) -> RunRecord:
    return read_run(os.path.join(RECORDS, f"{name}.json"))


def _cells() -> list[str]:
    return sorted(p for p in glob.glob(os.path.join(SWEEP, "*.json")) if not p.endswith("summary.json"))


@pytest.mark.parametrize("name", ["mini-reference", "mini-llm"])
def test_run_md_golden(name: str, golden: Golden) -> None:
    golden(f"run-{name}.md", render(_record(name), "run.md.j2"))


def test_summary_md_golden(tmp_path: Path, golden: Golden) -> None:
    with open(os.path.join(SWEEP, "summary.json"), encoding="utf-8") as fh:
        summary = json.load(fh)
    text = write_summary(str(tmp_path), summary)
    assert (tmp_path / "summary.md").read_text(encoding="utf-8") == text
    page = (tmp_path / "summary.html").read_text(encoding="utf-8")
    assert "<svg" in page and 'class="pareto"' in page and "<h2>Flipped probes</h2>" in page
    golden("summary-sweep.md", text)


def test_compare_golden_over_recorded_cells(golden: Golden, capsys) -> None:
    text = render_comparison(compare_files(_cells(), None))
    golden("compare-recorded-sweep.txt", text)
    assert cli(["compare", *_cells()]) == 0  # the command prints exactly that text
    assert capsys.readouterr().out == text


# -- run.html, parsed --------------------------------------------------------------------------

class Outline(HTMLParser):
    """The parts of run.html a reader navigates by: headings, tables (under which heading, their
    header and body rows) and the per-probe <details> (class, summary line, pack text)."""

    def __init__(self) -> None:
        super().__init__()
        self.headings: list[tuple[str, str]] = []
        self.tables: list[dict[str, Any]] = []
        self.details: list[dict[str, Any]] = []
        self._text: list[str] | None = None
        self._row: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("h1", "h2", "h3", "th", "td", "summary", "pre"):
            self._text = []
        elif tag == "table":
            self.tables.append({"under": self.headings[-1][1] if self.headings else None, "header": [], "rows": []})
        elif tag == "tr":
            self._row = []
        elif tag == "details" and "probe" in (dict(attrs).get("class") or "").split():  # not the Misses groups
            self.details.append({"class": dict(attrs).get("class"), "summary": None, "pre": None})

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        text = "".join(self._text or [])
        if tag in ("h1", "h2", "h3"):
            self.headings.append((tag, text))
        elif tag in ("th", "td") and self._row is not None:
            self._row.append(text)
        elif tag == "tr" and self._row is not None:
            table = self.tables[-1]
            if table["header"] or table["rows"]:
                table["rows"].append(self._row)
            else:
                table["header"] = self._row
            self._row = None
        elif tag in ("summary", "pre") and self.details:
            self.details[-1][tag] = text
        if tag in ("h1", "h2", "h3", "th", "td", "summary", "pre"):
            self._text = None


def _outline(record: RunRecord) -> Outline:
    outline = Outline()
    outline.feed(render(record, "run.html.j2"))
    outline.close()
    return outline


def _md_headings(record: RunRecord) -> list[tuple[str, str]]:
    lines = render(record, "run.md.j2").splitlines()
    return [("h1" if line.startswith("# ") else "h2", line.split(" ", 1)[1]) for line in lines
            if line.startswith(("# ", "## "))]


@pytest.mark.parametrize("name", ["mini-reference", "mini-llm"])
def test_run_html_structure(name: str) -> None:
    record = _record(name)
    page = _outline(record)
    # every section run.md has, in the same order, then the probes
    assert page.headings == _md_headings(record) + [("h2", "Probes")]
    assert ("h2", "Answerer") in page.headings or record.answerer is None
    tables = {t["under"]: t for t in page.tables}
    phases = {(p.scenario, p.phase) for p in record.probes}
    # one row per scenario and phase, and an "all" row per phase
    assert len(tables["Accuracy"]["rows"]) == len(phases) + len({phase for _, phase in phases})
    assert len(tables["Latency (ms)"]["rows"]) == len(record.timings)
    assert [(row[0], row[1]) for row in tables["KPIs"]["rows"]] == [(k.group, k.name) for k in record.kpis]
    assert [row[0] for row in tables["Scenarios"]["rows"]] == [s.id for s in record.scenarios]
    for table in tables.values():
        if table["header"] and table["under"] != "Answerer":
            assert all(len(row) == len(table["header"]) for row in table["rows"]), table["under"]
    # one <details> per probe record, in order, its pack shown whole (and unescaped back to the text)
    assert len(page.details) == len(record.probes)
    for probe, shown in zip(record.probes, page.details):
        assert shown["summary"].startswith(f"{probe.scenario} · {probe.phase} · {probe.id} · ")
        assert shown["pre"] == (probe.pack or "")
        classes = set(shown["class"].split())
        missed = probe.status == "scored" and (probe.hit is False or probe.answer_ok is False or bool(probe.stale_first))
        assert ("pass" in classes) is (probe.status == "scored" and not missed and not probe.invented
                                       and not probe.leak and probe.llm_ok is not False), probe.id
        assert "True" not in shown["summary"] and "False" not in shown["summary"]


def test_run_html_keeps_markup_in_a_pack_as_text() -> None:
    record = _record("mini-reference")
    pack = "# Memory\n- <script>alert('x')</script><h2>KPIs</h2>"
    record = replace(record, probes=(replace(record.probes[0], pack=pack), *record.probes[1:]))
    page = _outline(record)
    assert page.details[0]["pre"] == pack  # text, not elements
    assert [h for h in page.headings if h[1] == "KPIs"] == [("h2", "KPIs")]
