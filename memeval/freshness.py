"""Supersession across a pack's sections: a value a newer item replaced goes last.

Sections come in a fixed priority order (Brain before conversations), so a plan document's
first budget would otherwise precede the later turn that changed it. Two dated items
*disagree on the same thing* when

- they share at least two content words besides their numbers, and at least
  :data:`SHARED_SHARE` of the smaller item's content words (the "thing");
- the question (when there is one) names at least one of those shared words;
- each holds a value the other lacks (a value is a word with a digit, e.g. ``47,500`` or
  ``iOS 17``'s ``17``, or a capitalised word, e.g. a name).

The older of such a pair is *superseded*: its bullet leaves its section for a final
"Superseded" section, so every current value comes before every replaced one, and a pack over
budget drops the replaced values first. Nothing is removed: sources that merely disagree
(neither replaces the other in fact) still both reach the agent.
"""

from __future__ import annotations

import re
from functools import lru_cache
from collections.abc import Mapping

from memeval.engines.base import MemoryItem
from memeval.engines.reference_index import STOPWORDS, analyze
from memeval.pack import Section

HEADING = "Superseded (older values)"
SHARED_SHARE = 0.4
MIN_SHARED = 2
Shape = tuple[frozenset[str], frozenset[str]]
_TOKEN = re.compile(r"[\w.,%-]*\d[\w.,%-]*|[A-Z][\w'-]*")


def prefer_fresh(sections: list[Section], items: Mapping[str, MemoryItem | None], query: str | None) -> list[Section]:
    """``sections`` with superseded bullets moved to a final section (see the module docstring).

    ``items`` maps the refs that may move to their items; refs mapped to None (or absent) never
    move nor supersede. Returns the same list when nothing is superseded.
    """
    dated = [(ref, item) for ref, item in items.items() if item is not None and item.at]
    shapes = {ref: shape(item.text if item.title is None else f"{item.title}\n{item.text}") for ref, item in dated}
    asked = asked_words(query)
    stale = {old for old, item in dated for new, other in dated
             if other.at > item.at and replaces(shapes[new], shapes[old], asked)}  # type: ignore[operator]
    if not stale:
        return sections
    moved = Section(HEADING)
    for section in sections:
        keep = [(b, r) for b, r in zip(section.bullets, section.refs, strict=True) if r not in stale]
        moved.bullets += [b for b, r in zip(section.bullets, section.refs, strict=True) if r in stale]
        moved.refs += [r for r in section.refs if r in stale]
        section.bullets[:] = [b for b, _ in keep]
        section.refs[:] = [r for _, r in keep]
    return [*sections, moved]


def asked_words(query: str | None) -> frozenset[str] | None:
    """The content words of a question, the form :func:`replaces` takes (None without one)."""
    return frozenset(analyze(query)) if query else None


@lru_cache(maxsize=65_536)
def shape(text: str) -> Shape:
    """A text's content words outside its numbers, and its values (normalised); cached, since
    one pack's items are tested again by the next pack."""
    values = {t.strip(".,-").replace(",", "").lower() for t in _TOKEN.findall(text)}
    values -= STOPWORDS | {""}
    numbers = frozenset(analyze(" ".join(v for v in values if any(c.isdigit() for c in v))))
    return frozenset(analyze(text)) - numbers, frozenset(values)


def replaces(new: Shape, old: Shape, asked: frozenset[str] | None, share: float = SHARED_SHARE) -> bool:
    """Whether ``new`` and ``old`` state different values of one thing the question is about
    (``share``: the least share of the smaller item's content words they must have in common)."""
    shared = new[0] & old[0]
    if len(shared) < MIN_SHARED or len(shared) < share * min(len(new[0]), len(old[0])):
        return False
    if asked is not None and not asked & shared:
        return False
    return bool(new[1] - old[1]) and bool(old[1] - new[1])
