"""The extractive "model": the pack bullet sharing the most content words with the question.

Candidates are ``- `` bullets only, never prose; bullets ending in "?" (logged questions) are
skipped and the phrase "I don't have that in memory." is removed. Content words are lower-case,
split on anything that is not alphanumeric or '-', longer than one character and not a stopword.
The earliest bullet wins a tie; no bullet sharing a word means no answer (None).
"""

from __future__ import annotations

import re

STOPWORDS = frozenset(
    "a an and are as at be by do does did for from has have how i in is it its me my of on or our "
    "so that the their them they this to was we were what when where which who why will with you your".split()
)
NO_MEMORY = "I don't have that in memory."
_SPLIT = re.compile(r"[^0-9a-z\-]+")


def content_words(text: str) -> set[str]:
    """Lower-case words longer than one character that are not stopwords."""
    return {w for w in _SPLIT.split(text.lower()) if len(w) > 1 and w not in STOPWORDS}


def extract_answer(markdown: str, question: str) -> str | None:
    """The best bullet for ``question``, or None when no bullet shares a content word."""
    wanted = content_words(question)
    best, best_score = None, 0
    for line in markdown.splitlines():
        stripped = line.strip()
        if not stripped.startswith("- "):
            continue
        text = stripped[2:].replace(NO_MEMORY, "").strip()
        if not text or text.endswith("?"):
            continue
        score = len(wanted & content_words(text))
        if score > best_score:
            best, best_score = text, score
    return best
