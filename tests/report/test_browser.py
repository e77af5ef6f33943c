"""run.html, compare.html and summary.html in a real browser (headless Chromium): the charts
render as SVG, a probe opens from the address (#open=ID), a filter (#filter=misses) hides the
passes, and planted markup in a scenario stays inert text. Screenshots are kept as artifacts."""

from __future__ import annotations

import glob
import json
import os
import re
from pathlib import Path

import pytest

from memeval.sweep.summary import write_summary
from tests.conftest import FIXTURES, ROOT, cli
from tests.report.browser import artifacts, dump_dom, hostile_suite, screenshot

pytestmark = pytest.mark.slow
SWEEP = os.path.join(FIXTURES, "records", "sweep")


def _run(suite: str, out: Path) -> Path:
    assert cli(["run", suite, "--out", str(out), "--quiet", "--force"]) == 0
    return out / "run.html"


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> str:
    return artifacts(str(tmp_path_factory.mktemp("screenshots")))


def test_run_html_in_chromium(tmp_path: Path, shots: str) -> None:
    page = _run(os.path.join(ROOT, "specs", "agent-memory.yaml"), tmp_path / "run")
    record = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    missed = next(p for p in record["probes"] if p["status"] == "scored" and p["hit"] is False)
    dom = dump_dom(str(page), f"#filter=misses&open={missed['id']}")
    assert dom.count("<svg") >= 5 and 'class="bar"' in dom and 'class="whisker"' in dom and 'class="sample"' in dom
    details = re.findall(r"<details class=\"probe [^>]*>", dom)
    assert len(details) == len(record["probes"])
    passes = [d for d in details if re.search(r'class="probe pass"', d)]
    assert passes and all("hidden" in d for d in passes)  # the filter hid every pass ...
    assert all("hidden" not in d for d in details if d not in passes)  # ... and only the passes
    opened = [d for d in details if f'data-probe="{missed["id"]}"' in d]
    assert opened and any(" open" in d for d in opened)
    screenshot(str(page), os.path.join(shots, "run.png"))
    screenshot(str(page), os.path.join(shots, "run-misses.png"), f"#filter=misses&open={missed['id']}")


def test_planted_markup_stays_text(tmp_path: Path) -> None:
    dom = dump_dom(str(_run(str(hostile_suite(tmp_path)), tmp_path / "run")), "#filter=all")
    assert "pwned" not in re.search(r"<title>(.*?)</title>", dom).group(1)  # the script never ran
    assert "data-pwned" not in dom and "<img" not in dom  # no element was made from the pack
    assert "&lt;script&gt;document.title=" in dom and "onerror=" in dom  # it is shown, as text


def test_compare_and_summary_html_in_chromium(tmp_path: Path, shots: str) -> None:
    cells = sorted(p for p in glob.glob(os.path.join(SWEEP, "*-r*.json")))
    assert cli(["compare", *cells, "--html", str(tmp_path / "compare.html")]) == 0
    with open(os.path.join(SWEEP, "summary.json"), encoding="utf-8") as fh:
        write_summary(str(tmp_path), json.load(fh))
    for name in ("compare.html", "summary.html"):
        dom = dump_dom(str(tmp_path / name))
        assert "<svg" in dom and 'class="pareto"' in dom, name
        assert re.search(r'<td class="num (better|worse|noise|changed)" title="[^"]*p=', dom), name
        screenshot(str(tmp_path / name), os.path.join(shots, name.replace(".html", ".png")), size="1280,1600")
