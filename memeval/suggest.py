"""Close-match suggestions for error messages."""

from __future__ import annotations

import difflib
from typing import Iterable


def did_you_mean(word: str, options: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest option, or ``""`` when none is close."""
    close = difflib.get_close_matches(str(word), [str(o) for o in options], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def counted(count: int, noun: str) -> str:
    """``"1 scenario"``, ``"2 scenarios"``: a count with its noun in the right number."""
    return f"{count} {noun}{'' if count == 1 else 's'}"
