"""Supersession across a pack's sections: a value a newer item replaced goes last.

Sections come in a fixed priority order (Brain before conversations), so a plan document's
first budget would otherwise precede the later turn that changed it. The older of two dated
items that disagree on the same thing (:mod:`memeval.text.supersede`) is *superseded*: its
bullet leaves its section for a final "Superseded" section, so every current value comes before
every replaced one, and a pack over budget drops the replaced values first. Nothing is removed:
sources that merely disagree (neither replaces the other in fact) still both reach the agent.
"""

from __future__ import annotations

from collections.abc import Mapping

from memeval.engines.base import MemoryItem
from memeval.engines.listing import recency_key
from memeval.text.supersede import asked_words, replaces, shape
from memeval.agent.pack import Section

HEADING = "Superseded (older values)"


def prefer_fresh(sections: list[Section], items: Mapping[str, MemoryItem | None], query: str | None) -> list[Section]:
    """``sections`` with superseded bullets moved to a final section (see the module docstring).

    ``items`` maps the refs that may move to their items; refs mapped to None (or absent) never
    move nor supersede. Returns the same list when nothing is superseded.
    """
    dated = [(ref, item) for ref, item in items.items() if item is not None and item.at]
    shapes = {ref: shape(item.text if item.title is None else f"{item.title}\n{item.text}") for ref, item in dated}
    asked = asked_words(query)
    # By the instant, not the string: "10:00+02:00" is older than "09:00Z".
    when = {ref: recency_key(item, 0)[1] for ref, item in dated}
    stale = {old for old, _ in dated for new, _ in dated
             if when[new] > when[old] and replaces(shapes[new], shapes[old], asked)}
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
