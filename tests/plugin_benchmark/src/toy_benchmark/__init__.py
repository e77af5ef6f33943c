"""A toy benchmark from outside memeval: one subpackage and one entry point.

Its file is a JSON array of sessions::

    [{"id": "s1", "date": "2024-03-05 09:30", "facts": ["My cat is called Tom."],
      "questions": [{"id": "s1-q1", "question": "What is my cat called?", "answer": "Tom", "kind": "pets"}]}]

Each session is one unit (a scenario in its own tenant: its facts told as one thread, its
questions asked the next day). Its grader ``toy-exact`` scores an answer 1 when it holds the
gold answer (case-insensitive), else 0; its table is the mean score per ``kind``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from memeval.benchmarks.base import Benchmark, ComputedGrader, Graded, GraderInfo, JudgeGrader, Score, ScoreTable, Unit
from memeval.benchmarks.tables import mean_score, pct
from memeval.datasets.fields import Where
from memeval.datasets.yamlout import STYLE, ImportResult, clock, day_of, iso, safe_id
from memeval.errors import UsageError
from memeval.record import ProbeResult

EXACT = GraderInfo("toy-exact", "1", "toy", "example/toy", "grade.py", "0" * 40,
                   "1 if the answer holds the gold answer (case-insensitive), else 0")


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answer: str
    kind: str


@dataclass(frozen=True)
class Session:
    id: str
    date: datetime
    facts: tuple[str, ...]
    questions: tuple[Question, ...]


def _exact(probe: ProbeResult) -> Graded | None:
    if probe.llm_answer is None or not probe.expect:
        return None
    return Graded(1.0 if probe.expect[0].lower() in probe.llm_answer.lower() else 0.0)


class Toy:
    name = "toy"
    title = "Toy"
    variants = ("v1",)
    import_notes = ("each session's facts are one replayed thread; its questions are asked the next day",)
    import_extra: Mapping[str, Any] = {}
    import_message = None
    graders = (EXACT,)
    official_grader = EXACT.name
    grader_note = "the toy's exact-containment grader scores the model's answers under --llm"
    computed: Mapping[str, ComputedGrader] = {EXACT.name: ComputedGrader(EXACT, "exact", _exact)}
    judges: Mapping[str, JudgeGrader] = {}
    beside: Mapping[str, str] = {}
    category_map: Mapping[str, str] = {}
    category_label = "kind"
    category_source = None
    cluster_unit = "scenario"
    abstention = None

    def parse(self, path: Path, index: int, raw: Any) -> Session:
        where = Where(path, f"session {index}")
        record = where.obj(raw, "(session)")
        sid = where.text(record, "id")
        try:
            date = datetime.strptime(where.text(record, "date"), "%Y-%m-%d %H:%M")
        except ValueError:
            raise where.error("date", "expected YYYY-MM-DD HH:MM") from None
        rows = where.required(record, "questions")
        if not isinstance(rows, list):
            raise where.error("questions", "expected a list")
        questions = tuple(Question(where.text(q, "id"), where.text(q, "question"), where.text(q, "answer"),
                                   where.text(q, "kind")) for q in (where.obj(r, "questions[]") for r in rows))
        return Session(sid, date, where.text_list(record, "facts"), questions)

    def unit(self, item: Session) -> Unit:
        return Unit(item.id, tuple(q.id for q in item.questions), item.date)

    def variant(self, path: Path, first: Session, wanted: str | None) -> str:
        if wanted not in (None, *self.variants):
            raise UsageError(f"{path}: field 'variant': {wanted!r} is not a toy variant (v1)")
        return wanted or self.variants[0]

    def scenario_id(self, unit_id: str) -> str:
        return safe_id(unit_id, "toy-")

    def probe_id(self, question_id: str) -> str:
        return safe_id(question_id)

    def scenario(self, item: Session, chosen: set[str], epoch: datetime, result: ImportResult) -> dict[str, Any] | None:
        asked = [q for q in item.questions if q.id in chosen]
        if not asked:
            return None
        when = iso(item.date + timedelta(days=1))
        return {"scenario": self.scenario_id(item.id), "about": f"Toy session {item.id}.",
                "tenants": [safe_id(item.id, "t-")], "agents": [{"id": "me", "role": "remembers what I told it"}],
                "threads": [{"id": "told", "agent": "me", "day": day_of(epoch, item.date), "time": clock(item.date),
                             "replay": True, "exchanges": [{"user": fact} for fact in item.facts]}],
                "probes": [{"id": self.probe_id(q.id), "route": "ask", "agent": "me", "question": q.question,
                            "style": STYLE, "asked_at": when, "expect": [q.answer], "category": q.kind}
                           for q in asked]}

    def table(self, probes: Sequence[ProbeResult], title: str, grader: str | None, score: Score) -> ScoreTable:
        scored = [(p.category or "", s) for p in probes if (s := score(p)) is not None]
        means = [mean_score(kind, [s for k, s in scored if k == kind]) for kind in sorted({k for k, _ in scored})]
        rows = tuple((m.name, pct(m.mean), str(m.n)) for m in means)
        return ScoreTable(title, (*rows, ("overall", pct(mean_score("overall", [s for _, s in scored]).mean),
                                          str(len(scored)))), ())


BENCHMARK: Benchmark[Session] = Toy()
