"""LoCoMo samples (snap-research/locomo, ``data/locomo10.json``) from the JSON edge to typed values.

The real file's quirks are handled here and nowhere else: ``category`` sometimes the string
``'5'``; category-5 ``evidence`` sometimes the string repr of a list (``"['D2:3']"``); answers
that are integers or missing; category-5 rows with ``adversarial_answer`` (the trap) and usually
no ``answer``; rows with no evidence; photo turns with ``img_url``, ``blip_caption``, ``query``.
"""

from __future__ import annotations

import ast
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from memeval.benchmarks.locomo.model import LOCOMO_CATEGORIES, LocomoQuestion, LocomoSample, LocomoSession, LocomoTurn
from memeval.datasets.fields import Where
from memeval.errors import UsageError

VARIANTS = ("locomo10",)
_SESSION = re.compile(r"^session_(\d+)$")
_DIA = re.compile(r"D\d+:\d+")
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"


def parse_date(where: Where, field: str, text: Any) -> datetime:
    """A LoCoMo session date such as ``1:56 pm on 8 May, 2023`` (naive; the file gives no zone)."""
    if isinstance(text, str):
        try:
            return datetime.strptime(text.strip(), _DATE_FORMAT)
        except ValueError:
            pass
    raise where.error(field, f"expected a date like '1:56 pm on 8 May, 2023', got {text!r}"[:200])


def parse_sample(path: Path, index: int, raw: Any) -> LocomoSample:
    """One sample, checked field by field; raises :class:`UsageError` naming the field."""
    where = Where(path, f"sample {index}")
    record = where.obj(raw, "(sample)")
    sample_id = where.text(record, "sample_id")
    where = Where(path, f"sample {index} (sample_id {sample_id!r})")
    conversation = where.obj(where.required(record, "conversation"), "conversation")
    qa = where.required(record, "qa")
    if not isinstance(qa, list):
        raise where.error("qa", "expected a list of question rows")
    return LocomoSample(
        sample_id=sample_id,
        speaker_a=where.text(conversation, "speaker_a"), speaker_b=where.text(conversation, "speaker_b"),
        sessions=_sessions(where, conversation),
        questions=tuple(_question(where, sample_id, n, row) for n, row in enumerate(qa, 1)))


def _sessions(where: Where, conversation: dict[str, Any]) -> tuple[LocomoSession, ...]:
    numbers = sorted(int(m.group(1)) for key in conversation if (m := _SESSION.match(key)))
    if not numbers:
        raise where.error("conversation", "no session_<N> lists")
    out = []
    for number in numbers:
        field = f"conversation.session_{number}"
        turns = conversation[f"session_{number}"]
        if not isinstance(turns, list):
            raise where.error(field, "expected a list of turns")
        if not turns:
            continue
        date_field = f"session_{number}_date_time"
        if date_field not in conversation:
            raise where.error(f"conversation.{date_field}", "missing (every session with turns is dated)")
        date_text = conversation[date_field]
        out.append(LocomoSession(number=number, date=parse_date(where, f"conversation.{date_field}", date_text),
                                 date_text=date_text, turns=tuple(_turn(where, f"{field}[{t}]", turn)
                                                                  for t, turn in enumerate(turns))))
    return tuple(out)


def _turn(where: Where, field: str, raw: Any) -> LocomoTurn:
    turn = where.obj(raw, field)
    optional = {}
    for key in ("blip_caption", "query"):
        value = turn.get(key)
        if value is not None and not isinstance(value, str):
            raise where.error(f"{field}.{key}", "expected a string")
        optional[key] = value or None
    url = turn.get("img_url")
    if isinstance(url, list):  # the real file stores img_url as a list of one URL
        url = url[0] if url and isinstance(url[0], str) else None
    elif url is not None and not isinstance(url, str):
        raise where.error(f"{field}.img_url", "expected a string or a list of strings")
    return LocomoTurn(dia_id=where.text(turn, "dia_id"), speaker=where.text(turn, "speaker"),
                      text=where.text(turn, "text", allow_empty=True), img_url=url or None, **optional)


def _question(where: Where, sample_id: str, n: int, raw: Any) -> LocomoQuestion:
    field = f"qa[{n - 1}]"
    row = where.obj(raw, field)
    category = row.get("category")
    if isinstance(category, str) and category.strip().isdigit():
        category = int(category.strip())
    if isinstance(category, bool) or category not in LOCOMO_CATEGORIES:
        raise where.error(f"{field}.category", f"expected one of 1-5, got {category!r}")
    answer = row.get("answer")
    if isinstance(answer, bool) or not (answer is None or isinstance(answer, (str, int, float))):
        raise where.error(f"{field}.answer", "expected a string, a number or nothing")
    trap = row.get("adversarial_answer")
    if trap is not None and not isinstance(trap, (str, int, float)):
        raise where.error(f"{field}.adversarial_answer", "expected a string")
    return LocomoQuestion(
        id=f"{sample_id}-q{n}", question=where.text(row, "question"),
        answer=None if answer is None else str(answer), category=category,
        evidence=_evidence(where, f"{field}.evidence", row.get("evidence")),
        adversarial_answer=None if trap is None else str(trap))


def _evidence(where: Where, field: str, raw: Any) -> tuple[str, ...]:
    """The dia ids, from a list or from the string repr of one; an entry holding several ids
    (``"D8:6; D9:17"``) gives each."""
    if raw is None:
        return ()
    if isinstance(raw, str):
        try:
            raw = ast.literal_eval(raw) if raw.strip().startswith("[") else [raw]
        except (ValueError, SyntaxError):
            raise where.error(field, f"cannot read {raw!r} as a list of dia ids") from None
    if not isinstance(raw, list) or not all(isinstance(e, str) for e in raw):
        raise where.error(field, "expected a list of dia ids such as 'D1:3'")
    return tuple(dict.fromkeys(d for entry in raw for d in _DIA.findall(entry)))


def check_variant(path: Path, wanted: str | None) -> str:
    """``wanted``, or the only published variant when None. Raises :class:`UsageError` for a
    variant LoCoMo does not have."""
    if wanted is not None and wanted not in VARIANTS:
        raise UsageError(f"{path}: field 'variant': {wanted!r} is not a LoCoMo variant ({', '.join(VARIANTS)})")
    return wanted or VARIANTS[0]
