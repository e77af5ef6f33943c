"""Headless Chromium for the report tests, driven by its command line only (no extra Python
packages): ``--dump-dom`` gives the DOM after the page's scripts ran, ``--screenshot`` a PNG."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--virtual-time-budget=3000")


def chromium() -> str:
    """The Chromium binary, or skip the test saying how to get one."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no headless Chromium on PATH (Debian: apt-get install -y chromium; .ci/run installs it as root)")


def _run(url: str, *extra: str) -> str:
    with tempfile.TemporaryDirectory(prefix="memeval-chromium-") as profile:
        done = subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *extra, url],
                              capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def dump_dom(path: str, fragment: str = "") -> str:
    """The page's DOM as serialised after load (scripts run), for ``file://path#fragment``."""
    return _run(f"file://{os.path.abspath(path)}{fragment}", "--dump-dom")


def screenshot(path: str, png: str, fragment: str = "", size: str = "1280,2000") -> str:
    """Save a screenshot of the page to ``png``; returns ``png``."""
    _run(f"file://{os.path.abspath(path)}{fragment}", f"--screenshot={png}", f"--window-size={size}")
    assert os.path.getsize(png) > 10_000, png
    return png


def artifacts(fallback: str) -> str:
    """Where screenshots go: $MEMEVAL_ARTIFACTS if set, else ``fallback``; printed for CI logs."""
    folder = os.environ.get("MEMEVAL_ARTIFACTS") or fallback
    os.makedirs(folder, exist_ok=True)
    print(f"screenshots in {folder}")
    return folder


HOSTILE = ("<script>document.title='pwned'</script><img src=x onerror=\"document.body.dataset.pwned='yes'\">"
           " The Acme office is at 12 Harbour Street.")
"""Markup planted in a document of the mini suite: a script and an image whose handler would run."""


def hostile_suite(folder: Path) -> Path:
    """The mini suite (tests/fixtures/mini.yaml) with :data:`HOSTILE` planted in a document the
    packs quote, written into ``folder``."""
    root = Path(__file__).resolve().parents[2]
    suite = (root / "tests" / "fixtures" / "mini.yaml").read_text(encoding="utf-8")
    text = "The Acme office is at 12 Harbour Street. Badge pickup is at reception."
    assert text in suite
    path = folder / "hostile.yaml"
    path.write_text(suite.replace(text, HOSTILE.replace('"', '\\"')).replace("../../memeval", str(root / "memeval")),
                    encoding="utf-8")
    return path
