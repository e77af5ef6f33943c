"""LongMemEval instances (xiaowu0162/LongMemEval) from the JSON edge to typed values.

Files: ``longmemeval_s.json``, ``longmemeval_m.json``, ``longmemeval_oracle.json`` and the
2025-09 re-release ``longmemeval_s_cleaned.json`` / ``longmemeval_m_cleaned.json`` (whose
scores are not comparable with the originals). Each is a JSON list of instances.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

from memeval.benchmarks.longmemeval.model import LONGMEMEVAL_TYPES, LmeInstance, Session, Turn
from memeval.datasets.fields import Where
from memeval.errors import UsageError

VARIANTS = ("s", "m", "oracle", "s_cleaned", "m_cleaned")
SYNTHETIC = "synthetic"  # a file `memeval generate` wrote: LongMemEval's format, no published variant
_DATE = re.compile(r"^(\d{4})/(\d{2})/(\d{2}) \((Mon|Tue|Wed|Thu|Fri|Sat|Sun)\) (\d{2}):(\d{2})$")
_ROLES = ("user", "assistant")


def parse_date(where: Where, field: str, text: Any) -> datetime:
    """A LongMemEval date such as ``2023/05/30 (Tue) 23:17`` (naive; the file gives no zone)."""
    match = _DATE.match(text) if isinstance(text, str) else None
    if not match:
        raise where.error(field, f"expected a date like '2023/05/30 (Tue) 23:17', got {text!r}"[:200])
    y, mo, d, _, h, mi = match.groups()
    try:
        return datetime(int(y), int(mo), int(d), int(h), int(mi))
    except ValueError as err:
        raise where.error(field, f"{text!r} is not a real date ({err})") from None


def parse_instance(path: Path, index: int, raw: Any) -> LmeInstance:
    """One instance, checked field by field; raises :class:`UsageError` naming the field."""
    where = Where(path, f"instance {index}")
    record = where.obj(raw, "(instance)")
    qid = where.text(record, "question_id")
    where = Where(path, f"instance {index} (question_id {qid!r})")
    qtype = where.text(record, "question_type")
    if qtype not in LONGMEMEVAL_TYPES:
        raise where.error("question_type", f"unknown type {qtype!r}; expected one of {', '.join(LONGMEMEVAL_TYPES)}")
    answer = where.required(record, "answer")
    if isinstance(answer, bool) or not isinstance(answer, (str, int)):
        raise where.error("answer", "expected a string or an integer")
    return LmeInstance(
        question_id=qid, question_type=qtype, question=where.text(record, "question"),
        answer=str(answer), asked_at=parse_date(where, "question_date", record.get("question_date")),
        asked_text=record["question_date"], sessions=_sessions(where, record),
        answer_session_ids=where.text_list(record, "answer_session_ids"),
        abstention=qid.endswith("_abs"))


def _sessions(where: Where, record: dict[str, Any]) -> tuple[Session, ...]:
    ids = where.text_list(record, "haystack_session_ids")
    dates = where.text_list(record, "haystack_dates")
    sessions = where.required(record, "haystack_sessions")
    if not isinstance(sessions, list):
        raise where.error("haystack_sessions", "expected a list of sessions")
    if not len(ids) == len(dates) == len(sessions):
        raise where.error("haystack_sessions", f"{len(sessions)} sessions but {len(ids)} haystack_session_ids "
                          f"and {len(dates)} haystack_dates; the three lists must be parallel")
    out = []
    for n, (sid, date, turns) in enumerate(zip(ids, dates, sessions)):
        out.append(Session(id=sid, date=parse_date(where, f"haystack_dates[{n}]", date), date_text=date,
                           turns=_turns(where, f"haystack_sessions[{n}]", turns)))
    return tuple(sorted(out, key=lambda s: s.date))


def _turns(where: Where, field: str, raw: Any) -> tuple[Turn, ...]:
    if not isinstance(raw, list):
        raise where.error(field, "expected a list of turns")
    out = []
    for t, turn in enumerate(raw):  # the hot loop of a large file: names are built only on error
        if not isinstance(turn, dict):
            raise where.error(f"{field}[{t}]", "expected an object")
        role, content = turn.get("role"), turn.get("content")
        if role not in _ROLES:
            raise where.error(f"{field}[{t}].role", f"expected 'user' or 'assistant', got {role!r}")
        if not isinstance(content, str):
            raise where.error(f"{field}[{t}].content", "expected a string")
        out.append(Turn(role, content, turn.get("has_answer") is True))
    return tuple(out)


def variant_of(path: Path) -> str | None:
    """The variant a file's published name says (``longmemeval_s_cleaned.json`` → ``s_cleaned``),
    or None for a renamed file."""
    match = re.match(r"^longmemeval_(s|m|oracle)(_cleaned)?\.json$", path.name)
    return None if not match else match.group(1) + (match.group(2) or "")


def check_variant(path: Path, first: LmeInstance, wanted: str | None) -> str:
    """The variant of the file: ``wanted`` when given, else the file name's (``synthetic`` is
    taken as given: a generated file is no published variant). The content must
    agree with its family: an oracle haystack holds only evidence sessions; ``m`` haystacks hold
    hundreds of sessions, ``s`` haystacks a few dozen. Raises :class:`UsageError` on a mismatch
    or when neither the name nor ``wanted`` says the variant."""
    named = variant_of(path)
    if wanted == SYNTHETIC:
        return wanted
    if wanted is not None and wanted not in VARIANTS:
        raise UsageError(f"{path}: variant {wanted!r} is not a LongMemEval variant ({', '.join(VARIANTS)})")
    if wanted and named and wanted != named:
        raise UsageError(f"{path}: field 'variant': the file is named as variant {named!r} but {wanted!r} was asked for")
    variant = wanted or named
    if variant is None:
        raise UsageError(f"{path}: field 'variant': cannot tell the variant from the file name; pass --variant "
                         f"({', '.join(VARIANTS)})")
    family = _family(first)
    if family != variant.split("_")[0]:
        raise UsageError(f"{path}: field 'variant': variant {variant!r} was expected, but instance 1 "
                         f"({first.question_id!r}, {len(first.sessions)} sessions) looks like {family!r}")
    return variant


def _family(first: LmeInstance) -> str:
    answer_ids = set(first.answer_session_ids)
    if first.sessions and all(s.id in answer_ids for s in first.sessions):
        return "oracle"
    return "m" if len(first.sessions) > 150 else "s"
