"""LongMemEval (xiaowu0162/LongMemEval) as a memeval benchmark.

One question is one unit: a scenario in a tenant of its own, its haystack sessions as dated
threads, the question as one probe. Graded by LongMemEval's judge (``longmemeval-judge``, one
prompt per question type); tables per question type with the task-averaged, overall and
abstention accuracy. Its modules: :mod:`.model`, :mod:`.reader`, :mod:`.mapping`, :mod:`.judge`,
:mod:`.tables`, ``prompts/``. ``memeval generate`` writes synthetic files in its format
(variant ``synthetic``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from memeval.benchmarks.base import Benchmark, ComputedGrader, GraderInfo, JudgeGrader, Score, ScoreTable, Unit
from memeval.benchmarks.longmemeval import judge, mapping, reader, tables
from memeval.benchmarks.longmemeval.model import LmeInstance
from memeval.datasets.yamlout import REPLAY_NOTE, STYLE_NOTE, ImportResult
from memeval.record import ProbeResult


class LongMemEval:
    """The LongMemEval benchmark (see :class:`memeval.benchmarks.base.Benchmark` for each member)."""

    name = "longmemeval"
    title = "LongMemEval"
    variants = reader.VARIANTS
    import_notes = (
        REPLAY_NOTE,
        "a probe's asked_at is LongMemEval's question_date (verbatim in x-question_date)",
        "a probe's category is the question type",
        "exchange ids are <session>:<turn index>; a probe's evidence cites them",
        STYLE_NOTE,
        "abstention questions (_abs) are answer_only: the model's answer is graded, not the pack",
        "a probe's gold is the answer a judge grader reads where it is not expect[0] (an _abs explanation)",
        "preference questions are judged probes: their rubric is the gold, no expect (no value a pack can hold), "
        "scored only by the longmemeval-judge grader under --llm",
    )
    import_extra: Mapping[str, Any] = {}
    import_message = None
    graders: tuple[GraderInfo, ...] = (judge.LONGMEMEVAL_JUDGE,)
    official_grader = judge.LONGMEMEVAL_JUDGE.name
    grader_note = "LongMemEval's official judge (one prompt per question type) scores the model's answers under --llm"
    computed: Mapping[str, ComputedGrader] = {}
    judges: Mapping[str, JudgeGrader] = {judge.LONGMEMEVAL_JUDGE.name: judge.JUDGE}
    beside: Mapping[str, str] = {}
    category_map: Mapping[str, str] = {}
    category_label = "question type"
    category_source = None
    cluster_unit = "haystack"
    abstention = "a question id ending _abs is an abstention probe, counted in its type, overall and abstention accuracy"

    def parse(self, path: Path, index: int, raw: Any) -> LmeInstance:
        """One instance of a LongMemEval file."""
        return reader.parse_instance(path, index, raw)

    def unit(self, item: LmeInstance) -> Unit:
        """A question with its own haystack, from its first session (its asking date without one)."""
        dates = [s.date for s in item.sessions] or [item.asked_at]
        return Unit(item.question_id, (item.question_id,), min(dates))

    def variant(self, path: Path, first: LmeInstance, wanted: str | None) -> str:
        """See :func:`.reader.check_variant` (``synthetic`` for a ``memeval generate`` file)."""
        return reader.check_variant(path, first, wanted)

    def scenario_id(self, unit_id: str) -> str:
        """``lme-<question id>``."""
        return mapping.scenario_id(unit_id)

    def probe_id(self, question_id: str) -> str:
        """``q-<question id>``."""
        return mapping.probe_id(question_id)

    def scenario(self, item: LmeInstance, chosen: set[str], epoch: datetime,
                 result: ImportResult) -> dict[str, Any] | None:
        """The question over its haystack, or None when it is not chosen or cannot map (an
        empty answer, added to ``result.unmapped``)."""
        if item.question_id not in chosen:
            return None
        reason = mapping.unmapped_reason(item)
        if reason:
            result.unmapped.append({"question_id": item.question_id, "question_type": item.question_type,
                                    "question": item.question, "reason": reason})
            return None
        return mapping.scenario(item, epoch, result)

    def table(self, probes: Sequence[ProbeResult], title: str, grader: str | None, score: Score) -> ScoreTable:
        """Accuracy per question type and the aggregates (:func:`.tables.table`)."""
        return tables.table(probes, title, grader, score)


BENCHMARK: Benchmark[LmeInstance] = LongMemEval()
"""The entry point ``memeval.benchmarks: longmemeval``."""
