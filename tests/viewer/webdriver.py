"""A headless Chromium driven through chromedriver's W3C WebDriver protocol (plain HTTP on
loopback; no extra Python package): navigate, run a script in the page, click, take a
screenshot. Enough to check what is on screen, not only what is in the DOM."""

from __future__ import annotations

import base64
import json
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.report.browser import FLAGS, chromium

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"
ON_SCREEN = """
const el = document.querySelector(arguments[0]);
if (!el) { return null; }
const r = el.getBoundingClientRect();
return {top: r.top, bottom: r.bottom, height: r.height, inner: window.innerHeight,
        visible: r.height > 0 && r.bottom > 0 && r.top < window.innerHeight};
"""


def chromedriver() -> str:
    """The chromedriver binary, or skip the test saying how to get one."""
    found = shutil.which("chromedriver")
    if not found:
        pytest.skip("no chromedriver on PATH (Debian: apt-get install -y chromium-driver; .ci/run installs it as root)")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Browser:
    """One chromedriver process and one headless Chromium session; use as a context manager."""

    def __init__(self, width: int = 1280, height: int = 900) -> None:
        self.port = _free_port()
        self.profile = tempfile.TemporaryDirectory(prefix="memeval-webdriver-")
        self.proc = subprocess.Popen([chromedriver(), f"--port={self.port}"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        self._wait_ready()
        args = [f for f in FLAGS if not f.startswith("--virtual-time")]
        args += [f"--user-data-dir={self.profile.name}", f"--window-size={width},{height}"]
        caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome",
                                                 "goog:chromeOptions": {"binary": chromium(), "args": args}}}}
        self.session = self._call("POST", "/session", caps)["sessionId"]

    def _wait_ready(self) -> None:
        for _ in range(200):  # readiness poll, not a timing assertion: the process is up or it failed
            try:
                if self._call("GET", "/status").get("ready"):
                    return
            except (urllib.error.URLError, ConnectionError):
                pass
            if self.proc.poll() is not None:
                raise RuntimeError("chromedriver exited at start")
            time.sleep(0.05)
        raise RuntimeError("chromedriver did not become ready")

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                return json.loads(resp.read())["value"]
        except urllib.error.HTTPError as err:
            raise RuntimeError(f"webdriver {method} {path}: {err.read()[:500]!r}") from None

    def _session(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        return self._call(method, f"/session/{self.session}{path}", body)

    def get(self, url: str) -> None:
        """Navigate and wait for the page's load event."""
        self._session("POST", "/url", {"url": url})

    def script(self, source: str, *args: Any) -> Any:
        """Run ``source`` as a function body in the page with ``args``; its return value."""
        return self._session("POST", "/execute/sync", {"script": source, "args": list(args)})

    def on_screen(self, selector: str) -> dict[str, Any] | None:
        """The element's box against the viewport (``visible``: some of it is on screen), or None."""
        result: dict[str, Any] | None = self.script(ON_SCREEN, selector)
        return result

    def click(self, selector: str) -> None:
        """Click the first element matching ``selector``."""
        found = self._session("POST", "/element", {"using": "css selector", "value": selector})
        self._session("POST", f"/element/{found[ELEMENT]}/click", {})

    @property
    def url(self) -> str:
        """The page's current address."""
        value: str = self._session("GET", "/url")
        return value

    def screenshot(self, png: str) -> str:
        """Save the viewport as a PNG; returns ``png``."""
        with open(png, "wb") as fh:
            fh.write(base64.b64decode(self._session("GET", "/screenshot")))
        return png

    def close(self) -> None:
        """End the session and the driver."""
        try:
            self._call("DELETE", f"/session/{self.session}")
        finally:
            self.proc.terminate()
            self.proc.wait(timeout=30)
            self.profile.cleanup()

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
