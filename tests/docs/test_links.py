"""Every relative link of the README, docs/ and reports/ names a file that exists (the README
became a one-page index into docs/, so a moved page must not leave a link behind)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)\s]*)?\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def broken_links(page: Path) -> list[str]:
    """The relative link targets of a Markdown page (outside code blocks) that name no file."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return [target for target in LINK.findall(text)
            if not re.match(r"^[a-z]+:", target) and not (page.parent / target).exists()]


PAGES = sorted([Path(ROOT) / "README.md", *(Path(ROOT) / "docs").glob("*.md"), *(Path(ROOT) / "reports").glob("*.md")])


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_a_link_to_a_missing_page_is_found(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("x", encoding="utf-8")
    page = tmp_path / "index.md"
    page.write_text("[ok](there.md) [web](https://example.org/x) [gone](docs/gone.md#part)\n"
                    "```\n[in code](nowhere.md)\n```\n", encoding="utf-8")
    assert broken_links(page) == ["docs/gone.md"]


def test_the_readme_links_every_docs_page() -> None:
    readme = (Path(ROOT) / "README.md").read_text(encoding="utf-8")
    pages = {p.name for p in (Path(ROOT) / "docs").glob("*.md")}
    assert {name for name in pages if f"docs/{name}" not in readme} == set()
