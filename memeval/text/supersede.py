"""When one text replaces another: two dated items *disagree on the same thing* when

- they share at least two content words besides their numbers, and at least
  :data:`SHARED_SHARE` of the smaller item's content words (the "thing");
- the question (when there is one) names at least one of those shared words;
- each holds a value the other lacks (a value is a word with a digit, e.g. ``47,500`` or
  ``iOS 17``'s ``17``, or a capitalised word, e.g. a name).

The reference engine ranks with it (:mod:`memeval.engines.reference.rank`) and the pack puts
superseded values last with it (:mod:`memeval.agent.freshness`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from memeval.text.analyze import STOPWORDS, analyze

SHARED_SHARE = 0.4
MIN_SHARED = 2
Shape = tuple[frozenset[str], frozenset[str]]
_TOKEN = re.compile(r"[\w.,%-]*\d[\w.,%-]*|[A-Z][\w'-]*")
# _TOKEN's second branch alone: without a digit the first never matches, and trying it at every
# character of a word (to find no digit) is most of the cost of a shape.
_NAME = re.compile(r"[A-Z][\w'-]*")
_DIGIT = re.compile(r"\d")
_NOT_VALUES = STOPWORDS | {""}


def asked_words(query: str | None) -> frozenset[str] | None:
    """The content words of a question, the form :func:`replaces` takes (None without one)."""
    return frozenset(analyze(query)) if query else None


@lru_cache(maxsize=65_536)
def shape(text: str) -> Shape:
    """A text's content words outside its numbers, and its values (normalised); cached, since
    one pack's items are tested again by the next pack."""
    tokens = (_TOKEN if _DIGIT.search(text) else _NAME).findall(text)
    values = {t.strip(".,-").replace(",", "").lower() for t in tokens}
    values -= _NOT_VALUES
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
