"""run.html of a real run of a small suite whose scenario plants markup: parsed, the page holds
no element made from pack text (only its own one <script>), and shows the markup as text."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from tests.conftest import FIXTURES, ROOT, cli

PLANTED = "<script>document.title='pwned'</script><img src=x onerror=\\\"alert(1)\\\"> The Acme office is at 12 Harbour Street."


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text inside <pre> (the packs)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.packs: list[str] = []
        self._in_pre = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "pre":
            self._in_pre = True
            self.packs.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in_pre = self._in_pre and tag != "pre"

    def handle_data(self, data: str) -> None:
        if self._in_pre:
            self.packs[-1] += data


def test_planted_markup_in_a_scenario_is_inert(tmp_path: Path) -> None:
    text = "The Acme office is at 12 Harbour Street. Badge pickup is at reception."
    suite = (Path(FIXTURES) / "mini.yaml").read_text(encoding="utf-8")
    hostile = tmp_path / "hostile.yaml"
    hostile.write_text(suite.replace(text, PLANTED).replace("../../memeval", str(Path(ROOT) / "memeval")), encoding="utf-8")
    assert cli(["run", str(hostile), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    page = Tags()
    page.feed((tmp_path / "run" / "run.html").read_text(encoding="utf-8"))
    assert [t for t, _ in page.tags].count("script") == 1  # the page's own filter script only
    assert "img" not in [t for t, _ in page.tags]
    assert not any(name.startswith("on") for _, attrs in page.tags for name in attrs)
    assert any("<script>document.title='pwned'</script><img src=x onerror=" in pack for pack in page.packs)
    marks = [attrs.get("class") for t, attrs in page.tags if t == "mark"]
    assert "stale" in marks and "expect" in marks  # the strings are marked around the planted text
