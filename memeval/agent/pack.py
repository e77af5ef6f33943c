"""The context pack: markdown with sections, a token budget, and the units MRR counts.

A pack is ``# Memory`` followed by ``## Heading`` sections of ``- `` bullets (one line each, at
most 600 characters) or prose. Tokens are estimated as characters / 4. Over budget, the last
bullet of the last section goes first; a section left empty disappears.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memeval.engines.base import MemoryItem

BULLET_MAX = 600


def tokens(text: str) -> int:
    """Token estimate used for budgets and costs: characters / 4, rounded up."""
    return (len(text) + 3) // 4


def render_item(item: MemoryItem, show_agent: bool = False) -> str:
    """One item as one line: ``Title: body`` for documents, ``[YYYY-MM-DD HH:MM] role: text``
    for dated turns, the text for learnings."""
    text = " ".join(item.text.split())
    if item.kind == "document":
        line = f"{item.title}: {text}" if item.title else text
    elif item.kind == "turn":
        who = f"{item.agent}/{item.role}" if show_agent and item.agent else item.role
        stamp = f"[{item.at[:10]} {item.at[11:16]}] " if item.at else ""
        line = f"{stamp}{who}: {text}"
    else:
        line = text
    return line if len(line) <= BULLET_MAX else line[: BULLET_MAX - 1] + "…"


@dataclass
class Section:
    """A pack section: a heading and either bullets (each with the id of its item in ``refs``)
    or prose lines."""

    heading: str
    bullets: list[str] = field(default_factory=list)
    prose: list[str] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The markdown lines of this section (empty when it has nothing)."""
        if not self.bullets and not self.prose:
            return []
        return [f"## {self.heading}", *self.prose, *(f"- {b}" for b in self.bullets), ""]


@dataclass(frozen=True)
class Pack:
    """What the agent gets before a turn. ``refs`` are the item ids shown, in order."""

    markdown: str
    tokens: int
    refs: tuple[str, ...]
    sections: tuple[str, ...]
    trimmed: int = 0


def assemble(sections: list[Section], budget_tokens: int, front_matter: str = "", title: str = "Memory") -> Pack:
    """Render sections into a pack under ``# title``, trimming from the end until it fits the budget."""
    trimmed = 0
    while True:
        markdown = _render(sections, front_matter, title)
        if tokens(markdown) <= budget_tokens or not _trim_last(sections):
            break
        trimmed += 1
    live = [s for s in sections if s.bullets or s.prose]
    refs = tuple(r for s in live for r in s.refs)
    return Pack(markdown, tokens(markdown), refs, tuple(s.heading for s in live), trimmed)


def _render(sections: list[Section], front_matter: str, title: str) -> str:
    body = [f"# {title}", ""]
    for section in sections:
        body += section.lines()
    text = "\n".join(body).rstrip() + "\n"
    return front_matter + text


def _trim_last(sections: list[Section]) -> bool:
    for section in reversed(sections):
        if section.bullets:
            section.bullets.pop()
            section.refs.pop()
            return True
        if section.prose:
            last = section.prose[-1]
            if len(last) > 80:
                section.prose[-1] = last[: len(last) // 2].rstrip() + "…"
            else:
                section.prose.pop()
            return True
    return False


def units(markdown: str) -> list[tuple[str, str]]:
    """The units MRR counts, in reading order, as (section heading, text).

    Front matter, blank lines and the ``# `` title are skipped; a ``## `` line sets the section;
    every other non-empty line is one unit, with a leading ``- `` removed.
    """
    out: list[tuple[str, str]] = []
    section = ""
    lines = markdown.splitlines()
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), 0)
        lines = lines[end + 1:]
    for line in lines:
        stripped = line.strip()
        if not stripped or (stripped.startswith("# ") and not stripped.startswith("## ")):
            continue
        if stripped.startswith("## "):
            section = stripped[3:]
            continue
        out.append((section, stripped[2:] if stripped.startswith("- ") else stripped))
    return out
