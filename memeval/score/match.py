"""Matching expected strings against packs and answers.

Two modes, declared in YAML (``match:`` on the suite or a probe):

* ``word`` (default): case-insensitive, on word boundaries ("ten" does not match "often"),
  whitespace-insensitive, and number-aware: thousands separators are ignored on both sides, so
  ``6500`` matches ``6,500`` and ``6 500``, and a number never matches inside a longer number
  (``65`` does not match ``6500`` or ``6.5``).
* ``substring``: the original harness's plain case-insensitive substring test.
"""

from __future__ import annotations

import re
from functools import lru_cache

_THOUSANDS = re.compile(r"(?<=\d)[,\u00a0\u202f ](?=\d{3}(?!\d))")


def normalise_numbers(text: str) -> str:
    """Remove thousands separators between digit groups (``6,500`` → ``6500``)."""
    previous = None
    while previous != text:
        previous, text = text, _THOUSANDS.sub("", text)
    return text


@lru_cache(maxsize=4096)
def _pattern(needle: str) -> re.Pattern[str]:
    body = r"\s+".join(re.escape(part) for part in normalise_numbers(needle.strip()).split())
    left = r"(?<![\w])" if needle.strip()[:1].isalnum() else ""
    right = r"(?![\w])" if needle.strip()[-1:].isalnum() else ""
    if needle.strip()[:1].isdigit():
        left = r"(?<![\w])(?<!\d\.)"
    if needle.strip()[-1:].isdigit():
        right = r"(?![\w]|[.,]\d)"
    return re.compile(left + body + right, re.IGNORECASE)


def contains(text: str, needle: str, mode: str = "word") -> bool:
    """Whether ``needle`` occurs in ``text`` under ``mode`` (``word`` or ``substring``)."""
    if mode == "substring":
        return needle.lower() in text.lower()
    return _pattern(needle).search(normalise_numbers(text)) is not None


def holds_all(text: str, needles: tuple[str, ...], mode: str) -> bool:
    """Every needle occurs (vacuously true for none)."""
    return all(contains(text, n, mode) for n in needles)


def grade(text: str, expect: tuple[str, ...], accept: tuple[tuple[str, ...], ...], stale: tuple[str, ...], mode: str) -> bool:
    """An answer is right when it holds all of ``expect`` or all of one ``accept`` alternative,
    and no ``stale`` value."""
    if any(contains(text, s, mode) for s in stale):
        return False
    if expect and holds_all(text, expect, mode):
        return True
    return any(holds_all(text, alt, mode) for alt in accept)


@lru_cache(maxsize=16)
def _numbers_removed(text: str) -> tuple[str, tuple[int, ...]]:
    """``text`` after the passes of :func:`normalise_numbers`, and where each kept character came
    from (a probe's pack is searched for each of its needles)."""
    keep, current = list(range(len(text))), text
    while True:
        gone = {m.start() for m in _THOUSANDS.finditer(current)}
        if not gone:
            return current, tuple(keep)
        for i in sorted(gone, reverse=True):  # a few separators in a long text: delete, not rebuild
            del keep[i]
        current = _THOUSANDS.sub("", current)


def spans(text: str, needle: str, mode: str = "word") -> list[tuple[int, int]]:
    """Where ``needle`` occurs in ``text`` under ``mode``, as ``(start, end)`` offsets into the
    ORIGINAL text (a match found in the number-normalised text is mapped back, so ``6500``
    marks all of ``6,500``). Empty for an empty needle."""
    if not needle.strip():
        return []
    if mode == "substring":
        low, sub = text.lower(), needle.lower()
        return [(i, i + len(sub)) for i in range(len(low)) if low.startswith(sub, i)]
    current, keep = _numbers_removed(text)
    return [(keep[m.start()], keep[m.end() - 1] + 1) for m in _pattern(needle).finditer(current) if m.end() > m.start()]
