"""The viewer and run.html in a real headless Chromium (through chromedriver): the run list, a
run, a deep link that brings its probe on screen, a comparison, the leaderboard, and markup
planted in a scenario staying inert. "On screen" is measured in the page: the element's box
against the viewport after navigation. Screenshots go to $MEMEVAL_ARTIFACTS."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.report.browser import artifacts
from tests.viewer.conftest import Runs, serving
from tests.viewer.webdriver import Browser

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def base(runs: Runs) -> Iterator[str]:
    with serving(runs.root) as srv:
        yield srv.url.rstrip("/")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as b:
        yield b


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> str:
    return artifacts(str(tmp_path_factory.mktemp("view-screenshots")))


def _last_probe(runs: Runs, key: str) -> str:
    record = json.loads((Path(runs.root) / key / "run.json").read_text(encoding="utf-8"))
    return str(record["probes"][-1]["id"])


def test_run_list_then_a_run(browser: Browser, base: str, runs: Runs, shots: str) -> None:
    browser.get(base + "/")
    assert browser.on_screen('tr[data-key="alpha/r1"]')["visible"]  # type: ignore[index]
    assert browser.script("return document.querySelectorAll('table.runs tr[data-key]').length") == 5
    browser.screenshot(os.path.join(shots, "view-list.png"))
    browser.click('tr[data-key="bm25/r1"] a.run')
    assert browser.url == base + "/run/bm25/r1"
    assert browser.on_screen("h1")["visible"]  # type: ignore[index]
    assert browser.script("return document.querySelectorAll('svg.chart').length") >= 4
    browser.screenshot(os.path.join(shots, "view-run.png"))


def test_deep_link_brings_the_probe_on_screen(browser: Browser, base: str, runs: Runs, shots: str) -> None:
    probe = _last_probe(runs, runs.alpha[0])
    browser.get(f"{base}/run/{runs.alpha[0]}?open={quote(probe)}#open={quote(probe)}")
    box = browser.on_screen("details.probe.target")
    assert box and box["visible"] and box["top"] >= 0, box  # scrolled to, not merely present
    assert browser.script("return window.scrollY") > 1000  # the page did move: the probe is far down
    assert browser.script("return document.querySelector('details.probe.target').open") is True
    browser.screenshot(os.path.join(shots, "view-deep-link.png"))


def test_static_run_html_deep_link_scrolls(browser: Browser, runs: Runs, shots: str) -> None:
    probe = _last_probe(runs, runs.alpha[0])
    page = Path(runs.root) / runs.alpha[0] / "run.html"
    browser.get(f"file://{page}#filter=misses&open={quote(probe)}")
    box = browser.on_screen("details.probe.target")
    assert box and box["visible"] and box["top"] >= 0, box
    # a link in the Misses table brings its probe on screen too
    browser.get(f"file://{page}")
    link = browser.script("const a = document.querySelector('details.misses a'); a.scrollIntoView(); a.click(); "
                          "return new URLSearchParams(location.hash.slice(1)).get('open')")
    assert link and browser.on_screen("details.probe.target")["visible"]  # type: ignore[index]
    assert browser.script("return document.querySelector('details.probe.target').dataset.probe") == link
    browser.screenshot(os.path.join(shots, "run-html-deep-link.png"))


def test_comparison_on_screen(browser: Browser, base: str, runs: Runs, shots: str) -> None:
    browser.get(f"{base}/compare?run={runs.alpha[0]}&run={runs.bm25}")
    assert browser.on_screen("table.grid") is not None
    assert browser.script("document.querySelector('details.flip').scrollIntoView(); return 1") == 1
    assert browser.on_screen("details.flip .packs")["visible"]  # type: ignore[index]
    assert browser.script("return document.querySelectorAll('details.flip .packs pre').length") >= 2
    browser.screenshot(os.path.join(shots, "view-compare.png"))
    browser.get(f"{base}/compare?run={runs.alpha[0]}&run={runs.other}")
    assert browser.on_screen("table.refusal")["visible"]  # type: ignore[index]
    browser.screenshot(os.path.join(shots, "view-refused.png"))


def test_leaderboard_on_screen(browser: Browser, base: str, shots: str) -> None:
    browser.get(f"{base}/leaderboard?suite=agent-memory")
    assert browser.on_screen("table.leaderboard tr.frontier")["visible"]  # type: ignore[index]
    assert browser.script("return document.querySelectorAll('svg circle.pareto').length") >= 1
    browser.screenshot(os.path.join(shots, "view-leaderboard.png"))
    browser.get(f"{base}/trend?label=alpha")
    assert browser.script("return document.querySelectorAll('svg circle.run').length") == 4
    browser.screenshot(os.path.join(shots, "view-trend.png"))


def test_planted_markup_stays_inert(browser: Browser, base: str, runs: Runs) -> None:
    for url in (f"{base}/run/{runs.hostile}", f"{base}/run/{runs.hostile}?q=Harbour&group=scenario",
                f"file://{Path(runs.root) / runs.hostile / 'run.html'}#filter=all"):
        browser.get(url)
        assert "pwned" not in browser.script("return document.title")  # the planted script never ran
        assert browser.script("return document.body.dataset.pwned === undefined") is True
        assert browser.script("return document.querySelectorAll('img').length") == 0  # no element made from a pack
        assert "<script>document.title=" in browser.script("return document.body.innerText")  # shown as text
