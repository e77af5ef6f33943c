"""Typed, frozen values for LongMemEval's instances.

The reader (:mod:`memeval.benchmarks.longmemeval.reader`) turns the JSON edge into
these; nothing past it handles the file's dicts. Every value keeps the file's own wording (ids,
dates as written) next to the parsed form, so an import loses nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

LONGMEMEVAL_TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "temporal-reasoning",
    "knowledge-update",
    "multi-session",
)


@dataclass(frozen=True)
class Turn:
    """One LongMemEval turn: ``role`` is ``user`` or ``assistant``; ``has_answer`` marks evidence."""

    role: str
    content: str
    has_answer: bool


@dataclass(frozen=True)
class Session:
    """One LongMemEval haystack session, dated as the file dates it (``date_text`` verbatim)."""

    id: str
    date: datetime
    date_text: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class LmeInstance:
    """One LongMemEval question with its own haystack.

    ``answer`` is the gold answer as text (integers in the file become their decimal text);
    for an abstention question (``abstention``, the ``_abs`` id suffix) it is the file's
    explanation of why the question cannot be answered, not an answer. For
    single-session-preference it is a rubric. ``sessions`` are in ``haystack_dates`` order
    (stable for equal dates), which is not always the file's order.
    """

    question_id: str
    question_type: str
    question: str
    answer: str
    asked_at: datetime
    asked_text: str
    sessions: tuple[Session, ...]
    answer_session_ids: tuple[str, ...]
    abstention: bool
