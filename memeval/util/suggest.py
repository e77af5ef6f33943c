"""Close-match suggestions for error messages."""

from __future__ import annotations

import difflib
from typing import Iterable

# Words people reach for that spell nothing like memeval's: the key or value they mean.
ALIASES = {
    "via": "route", "path": "route", "method": "route", "kind": "route",
    "ctx": "brief", "context": "brief", "summary": "brief",
    "expected": "expect", "answer": "expect", "answers": "expect",
    "forbidden": "forbid", "deny": "forbid", "prompt": "question", "query": "question",
    "user": "agent", "by": "agent", "turns": "exchanges", "messages": "exchanges",
    "docs": "documents", "range": "dropped", "rounds": "exchanges",
}


def did_you_mean(word: str, options: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest option (or the option a known synonym stands
    for, see :data:`ALIASES`), or ``""`` when none is close."""
    names = [str(o) for o in options]
    alias = ALIASES.get(str(word).lower())
    if alias in names:
        return f" (did you mean {alias!r}?)"
    close = difflib.get_close_matches(str(word), names, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def plural(noun: str) -> str:
    """The noun's plural: ``scenarios``, ``categories``."""
    return noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else noun + "s"


def counted(count: int, noun: str) -> str:
    """``"1 scenario"``, ``"2 scenarios"``, ``"3 categories"``: a count with its noun in the right number."""
    return f"{count} {noun if count == 1 else plural(noun)}"
