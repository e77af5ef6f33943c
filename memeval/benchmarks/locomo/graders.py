"""LoCoMo's official scoring, as pure functions, and the record of which upstream rule each
follows. Evidence recall itself is memeval's generic measure (:mod:`memeval.runner.evidence`);
:data:`LOCOMO_EVIDENCE_RECALL` records the upstream rule it follows on LoCoMo.

LoCoMo's answer F1 follows ``task_eval/evaluation.py`` (snap-research/locomo): normalise
(drop commas; lowercase; strip ASCII punctuation; drop the words a, an, the and "and"; collapse
whitespace), stem each token with nltk's ``PorterStemmer`` (its default NLTK_EXTENSIONS mode, as
upstream constructs it; the stemmer needs no data download), then token F1. nltk is the
``memeval-harness[datasets]`` extra; without it these functions raise :class:`UsageError`.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import lru_cache
from typing import Any

from memeval.benchmarks.base import GraderInfo
from memeval.errors import UsageError

LOCOMO_REPO, LOCOMO_FILE, LOCOMO_COMMIT = "snap-research/locomo", "task_eval/evaluation.py", \
    "92286325a40764bee61f77824ddb95233b11c4d6"

LOCOMO_F1 = GraderInfo(
    "locomo-f1", "1", "locomo", LOCOMO_REPO, LOCOMO_FILE, LOCOMO_COMMIT,
    "normalise (commas, lowercase, punctuation, a/an/the/and), nltk Porter stem; token F1 for categories 2-4 "
    "(category 3's gold cut at the first ';'); category 1: mean over ','-split gold parts of the best F1 over "
    "','-split predicted parts; category 5: 1 if the output holds 'no information available' or 'not mentioned'")
LOCOMO_EVIDENCE_RECALL = GraderInfo(
    "locomo-evidence-recall", "1", "locomo", LOCOMO_REPO, LOCOMO_FILE, LOCOMO_COMMIT,
    "the fraction of a question's evidence dia ids present in the retrieved context; undefined without evidence")

_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCTUATION = frozenset(string.punctuation)
ABSTAIN_PHRASES = ("no information available", "not mentioned")


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    try:
        from nltk.stem import PorterStemmer
    except ImportError:
        raise UsageError("LoCoMo's F1 needs nltk's Porter stemmer: pip install 'memeval-harness[datasets]'") from None
    return PorterStemmer()


def require_stemmer() -> None:
    """Raise now what scoring LoCoMo's F1 would raise later: UsageError when nltk is missing."""
    _stemmer()


def normalize_answer(text: str) -> str:
    """LoCoMo's normaliser: commas dropped, lowercase, punctuation stripped, articles and
    "and" removed, whitespace collapsed."""
    text = text.replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def tokens(text: str) -> list[str]:
    """Normalised, Porter-stemmed tokens."""
    stem = _stemmer().stem
    return [stem(w) for w in normalize_answer(text).split()]


def token_f1(prediction: str, gold: str) -> float:
    """Token F1 between the stemmed tokens of ``prediction`` and ``gold``; 0.0 with no overlap."""
    predicted, expected = tokens(prediction), tokens(gold)
    same = sum((Counter(predicted) & Counter(expected)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(expected)
    return 2 * precision * recall / (precision + recall)


def multi_answer_f1(prediction: str, gold: str) -> float:
    """Category 1: split both on ``,``; the mean over gold parts of the best F1 over predicted parts."""
    predicted = [p.strip() for p in prediction.split(",")]
    parts = [g.strip() for g in gold.split(",")]
    return sum(max(token_f1(p, g) for p in predicted) for g in parts) / len(parts)


def says_not_there(prediction: str) -> bool:
    """Category 5's rule: the output says "no information available" or "not mentioned"."""
    lowered = prediction.lower()
    return any(phrase in lowered for phrase in ABSTAIN_PHRASES)


def locomo_score(category: int, prediction: str, answer: str | None) -> float | None:
    """LoCoMo's official per-question score in [0, 1]; None when a category 1-4 row has no
    gold answer (upstream would compare with the text "None"; memeval leaves it unscored)."""
    if category == 5:
        return 1.0 if says_not_there(prediction) else 0.0
    if category not in (1, 2, 3, 4):
        raise ValueError(f"LoCoMo category {category!r} is not 1-5")
    if answer is None:
        return None
    if category == 3:
        answer = answer.split(";")[0].strip()
    return multi_answer_f1(prediction, answer) if category == 1 else token_f1(prediction, answer)
