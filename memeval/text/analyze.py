"""Text analysis shared by the agent (supersession shapes) and the reference engine's index:
lower-cased unicode words, punctuation as spaces, stopwords, a light English stemmer."""

from __future__ import annotations

import re
import string

_WORD = re.compile(r"[^\W_]+")
_ASCII_PUNCTUATION = string.punctuation + "".join(map(chr, range(32)))
_ASCII_SEPARATORS = bytes.maketrans(_ASCII_PUNCTUATION.encode(), b" " * len(_ASCII_PUNCTUATION))
_UNICODE_PUNCTUATION = "\u2018\u2019\u201c\u201d\u2013\u2014\u2026\u00ab\u00bb"
_SEPARATORS = str.maketrans(dict.fromkeys(_ASCII_PUNCTUATION + _UNICODE_PUNCTUATION, " "))
# Analysed words kept in the cache before it is cleared.
CACHE_MAX = 200_000

STOPWORDS = frozenset(
    """a about above after again against all am an and any are aren as at be because been before
    being below between both but by can cannot could couldn did didn do does doesn doing don down
    during each else ever few for from further had hadn has hasn have haven having he her here
    hers herself him himself his how i if in into is isn it its itself just ll me might more most
    must mustn my myself no nor not now of off on once only or other ought our ours ourselves out
    over own re same shall shan she should shouldn so some such than that the their theirs them
    themselves then there these they this those through to too under until up upon us ve very
    was wasn we were weren what when where which while who whom whose why will with won would
    wouldn you your yours yourself yourselves""".split()
)

_analyzed: dict[str, str] = {}


def analyze(text: str) -> list[str]:
    """The index terms of ``text``, in order and with repeats.

    Lower-cased unicode words, stopwords and single letters (not digits) dropped, then lightly stemmed
    (:func:`stem`), so that ``moved``/``moves``/``moving`` meet. Never raises on any input.
    """
    words = flatten(text).split()
    try:
        return list(filter(None, map(_analyzed.__getitem__, words)))
    except KeyError:
        if len(_analyzed) > CACHE_MAX:
            _analyzed.clear()
        return [term for word in words for part in word_parts(word) if (term := word_term(part))]


def flatten(text: str) -> str:
    """``text`` lower-cased with punctuation turned into spaces (words are then ``split()``)."""
    lowered = text.lower()
    if lowered.isascii():
        return lowered.encode().translate(_ASCII_SEPARATORS).decode()
    return lowered.translate(_SEPARATORS)


def word_parts(word: str) -> list[str]:
    """``word`` itself, or its pieces when it still holds non-ASCII punctuation."""
    return [word] if word.isalnum() else _WORD.findall(word)


def word_term(word: str) -> str:
    """The (cached) index term of one word; ``""`` when it is not indexed."""
    term = _analyzed.get(word)
    if term is None:
        term = "" if word in STOPWORDS or (len(word) < 2 and not word.isdigit()) else stem(word)
        if word.isalnum():
            _analyzed[word] = term
    return term


def stem(word: str) -> str:
    """A light English suffix stripper (plurals, -ed, -ing, final e); idempotent on its output.

    It conflates more loosely than Porter's stemmer but is applied to documents and queries
    alike, which is all matching needs.
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith(("ies", "ied")) and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "ches", "shes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        base = word[: -len(suffix)]
        if word.endswith(suffix) and len(base) >= 3 and any(v in base for v in "aeiouy"):
            word = base
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word
