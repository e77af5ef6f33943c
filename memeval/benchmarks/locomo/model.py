"""Typed, frozen values for LoCoMo's samples.

The reader (:mod:`memeval.benchmarks.locomo.reader`) turns the JSON edge into these; nothing past
it handles the file's dicts. Every value keeps the file's own wording (ids, dates as written)
next to the parsed form, so an import loses nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

# LoCoMo's category ids as the file uses them (snap-research/locomo#29; evaluation.py comments,
# evaluation_stats.py column order). mem0's published mapping differs; this one is the importer's.
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
LOCOMO_IDS = {name: cid for cid, name in LOCOMO_CATEGORIES.items()}
"""LoCoMo's category ids by name (a probe records the name)."""


@dataclass(frozen=True)
class LocomoTurn:
    """One LoCoMo turn. Photo turns carry ``img_url``, ``blip_caption`` (the generated caption)
    and ``query`` (the annotator's image-search string, which no participant saw)."""

    dia_id: str
    speaker: str
    text: str
    img_url: str | None = None
    blip_caption: str | None = None
    query: str | None = None


@dataclass(frozen=True)
class LocomoSession:
    """``session_<number>`` of a conversation, dated by ``session_<number>_date_time``."""

    number: int
    date: datetime
    date_text: str
    turns: tuple[LocomoTurn, ...]


@dataclass(frozen=True)
class LocomoQuestion:
    """One ``qa`` row. ``id`` is ``<sample_id>-q<n>`` (1-based position in the file's ``qa``).

    ``answer`` is None where the file has none (most category-5 rows); ``adversarial_answer`` is
    category 5's trap. ``evidence`` holds the dia ids, parsed even when the file wrote the list
    as a string; it may be empty.
    """

    id: str
    question: str
    answer: str | None
    category: int
    evidence: tuple[str, ...]
    adversarial_answer: str | None

    @property
    def category_name(self) -> str:
        """The category's real name (see :data:`LOCOMO_CATEGORIES`)."""
        return LOCOMO_CATEGORIES[self.category]


@dataclass(frozen=True)
class LocomoSample:
    """One LoCoMo conversation: two speakers, dated sessions, and its questions."""

    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: tuple[LocomoSession, ...]
    questions: tuple[LocomoQuestion, ...]
