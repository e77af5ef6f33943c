"""Synthetic needle-in-a-haystack benchmarks of any size, written as a LongMemEval-format file.

Each question gets its own haystack of ``events`` turns (sessions of ``session_turns`` turns,
user and assistant alternating, one hour apart) of seeded filler, with one user turn, the
needle, at ``depth`` (0 = the first turn, 1 = the last). The file is written piece by piece, so
a million-event haystack never exists in memory as a whole; it is read back by the same
streaming reader as the published files (``memeval import longmemeval FILE --variant synthetic``).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO, Any

from memeval.errors import UsageError

_START = datetime(2023, 1, 2, 9, 0)
_SUBJECTS = ("the team", "our vendor", "the landlord", "my sister", "the courier", "the dentist", "the gym",
             "the bank", "my manager", "the school", "the plumber", "the airline", "the library", "a neighbour")
_VERBS = ("moved", "confirmed", "cancelled", "asked about", "rescheduled", "paid for", "complained about",
          "forgot", "approved", "ordered", "returned", "discussed", "booked", "checked")
_OBJECTS = ("the delivery", "the invoice", "the meeting", "the repair", "the subscription", "the tickets",
            "the parking permit", "the lease", "the report", "the groceries", "the appointment", "the refund")
_WHEN = ("on Monday", "last week", "this morning", "after lunch", "before the weekend", "yesterday",
         "next month", "in the evening", "at noon", "twice already")
_CODE_WORDS = ("amber", "birch", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper")


@dataclass(frozen=True)
class NeedleTemplate:
    """The needle: ``fact`` and ``question`` with ``{value}`` / no placeholder, ``answer`` with
    ``{value}``; the value is drawn from the seed for each question."""

    name: str
    fact: str
    question: str
    answer: str = "{value}"


TEMPLATES = {
    "locker-code": NeedleTemplate("locker-code", "By the way, my gym locker code is now {value}, please remember it.",
                                  "What is my gym locker code?"),
    "parking-spot": NeedleTemplate("parking-spot", "Note for later: my new parking spot at work is {value}.",
                                   "Which parking spot do I have at work?"),
}


def load_template(name_or_path: str) -> NeedleTemplate:
    """A shipped template by name, or a JSON file ``{"fact", "question", "answer"?}``."""
    if name_or_path in TEMPLATES:
        return TEMPLATES[name_or_path]
    path = Path(name_or_path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise UsageError(f"{path}: not a shipped template ({', '.join(TEMPLATES)}) nor a readable JSON file ({err})") from None
    if not isinstance(raw, dict) or not all(isinstance(raw.get(k), str) for k in ("fact", "question")):
        raise UsageError(f"{path}: field 'fact'/'question': a template needs both as strings")
    if "{value}" not in raw["fact"]:
        raise UsageError(f"{path}: field 'fact': must hold the placeholder {{value}}")
    return NeedleTemplate(path.stem, raw["fact"], raw["question"], str(raw.get("answer", "{value}")))


@dataclass(frozen=True)
class HaystackSpec:
    """What to generate: ``questions`` haystacks of ``events`` turns each."""

    template: NeedleTemplate
    events: int
    depth: float
    seed: int
    questions: int = 1
    session_turns: int = 10
    turn_words: int = 20

    def needle_index(self) -> int:
        """The needle's turn index: at ``depth``, moved back onto a user turn (even index)."""
        index = round(self.depth * (self.events - 1))
        return index - (index % 2)


def check(spec: HaystackSpec) -> None:
    """Raise :class:`UsageError` for sizes or a depth that cannot work."""
    if spec.events < 2 or spec.questions < 1 or spec.session_turns < 2 or spec.turn_words < 1:
        raise UsageError("generate: events >= 2, questions >= 1, session turns >= 2 and turn words >= 1")
    if not 0.0 <= spec.depth <= 1.0:
        raise UsageError(f"generate: --depth {spec.depth} is outside 0..1")


def write_file(spec: HaystackSpec, path: str | Path) -> int:
    """Write the file; returns its size in bytes."""
    check(spec)
    path = Path(path)
    rng = random.Random(spec.seed)
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        for q in range(spec.questions):
            out.write(",\n" if q else "\n")
            _write_question(out, spec, rng, q)
        out.write("\n]\n")
    return path.stat().st_size


def _write_question(out: IO[str], spec: HaystackSpec, rng: random.Random, q: int) -> None:
    value = f"{rng.choice(_CODE_WORDS)}-{rng.randint(1000, 9999)}"
    sessions = -(-spec.events // spec.session_turns)
    needle = spec.needle_index()
    qid = f"needle_{spec.seed}_{q:05d}"
    sids = [f"{qid}_s{n:06d}" for n in range(sessions)]
    dates = [_date(_START + timedelta(hours=n)) for n in range(sessions)]
    head: dict[str, Any] = {
        "question_id": qid, "question_type": "single-session-user",
        "question": spec.template.question.format(value=value), "answer": spec.template.answer.format(value=value),
        "question_date": _date(_START + timedelta(hours=sessions + 24)),
        "haystack_session_ids": sids, "haystack_dates": dates,
        "answer_session_ids": [sids[needle // spec.session_turns]]}
    out.write(json.dumps(head)[:-1] + ', "haystack_sessions": [')
    for n in range(sessions):
        first = n * spec.session_turns
        turns = [_turn(rng, spec, t, value if t == needle else None)
                 for t in range(first, min(first + spec.session_turns, spec.events))]
        out.write((", " if n else "") + json.dumps(turns))
    out.write("]}")


def _turn(rng: random.Random, spec: HaystackSpec, index: int, needle_value: str | None) -> dict[str, Any]:
    if needle_value is not None:
        return {"role": "user", "content": spec.template.fact.format(value=needle_value), "has_answer": True}
    role = "user" if index % 2 == 0 else "assistant"
    return {"role": role, "content": _filler(rng, spec.turn_words)}


def _filler(rng: random.Random, words: int) -> str:
    parts: list[str] = []
    while len(parts) < words:
        sentence = f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} {rng.choice(_WHEN)}."
        parts += (sentence[0].upper() + sentence[1:]).split()
    return " ".join(parts[:words])


def _date(when: datetime) -> str:
    return when.strftime("%Y/%m/%d (%a) %H:%M")
