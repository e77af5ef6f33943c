"""LoCoMo (snap-research/locomo, ``data/locomo10.json``) as a memeval benchmark.

One conversation is one unit: a scenario in one tenant, its dated sessions as threads, its
questions as probes (category 5 as abstention probes). Graded by LoCoMo's token F1
(``locomo-f1``, no model) or mem0's J (``mem0-j``, a judge model, with F1 reported beside it);
tables per category, overall with and without category 5. Its modules: :mod:`.model`,
:mod:`.reader`, :mod:`.mapping`, :mod:`.graders`, :mod:`.judge`, :mod:`.tables`, ``prompts/``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from memeval.benchmarks.base import Benchmark, ComputedGrader, Graded, GraderInfo, JudgeGrader, Score, ScoreTable, Unit
from memeval.benchmarks.locomo import judge, mapping, reader, tables
from memeval.benchmarks.locomo.graders import LOCOMO_EVIDENCE_RECALL, LOCOMO_F1, locomo_score, require_stemmer
from memeval.benchmarks.locomo.model import LOCOMO_CATEGORIES, LOCOMO_IDS, LocomoSample
from memeval.datasets.yamlout import REPLAY_NOTE, STYLE_NOTE, ImportResult
from memeval.record import ProbeResult

CATEGORY_SOURCE = "snap-research/locomo#29; mem0's published mapping differs"


def _f1(probe: ProbeResult) -> Graded | None:
    """LoCoMo's F1 of an answered question against its (cut) gold; None for a probe that is no
    LoCoMo question."""
    category = LOCOMO_IDS.get(probe.category or "")
    if category is None or probe.llm_answer is None:
        return None
    score = locomo_score(category, probe.llm_answer, probe.expect[0] if probe.expect else None)
    return Graded(score, None if score is not None else "no gold answer in the file")


class Locomo:
    """The LoCoMo benchmark (see :class:`memeval.benchmarks.base.Benchmark` for each member)."""

    name = "locomo"
    title = "LoCoMo"
    variants = reader.VARIANTS
    import_notes = (
        REPLAY_NOTE,
        "a probe's asked_at is the conversation's last session date (LoCoMo dates no question)",
        "a probe's category is LoCoMo's category name (its id in x-category)",
        "exchange ids are LoCoMo's dia ids; a probe's evidence cites them",
        STYLE_NOTE,
        "category 5 (adversarial) questions are answer_only: the model's answer is graded, not the pack",
        "a probe's gold is the full answer mem0's J reads where it is not expect[0] (category 3's gold is cut at ';')",
    )
    import_extra: Mapping[str, Any] = {"x-category_map": dict(LOCOMO_CATEGORIES)}
    import_message = ("LoCoMo categories: " + ", ".join(f"{k} {v}" for k, v in LOCOMO_CATEGORIES.items())
                      + f" ({CATEGORY_SOURCE})")
    graders: tuple[GraderInfo, ...] = (LOCOMO_F1, judge.LOCOMO_J, LOCOMO_EVIDENCE_RECALL)
    official_grader = LOCOMO_F1.name
    grader_note = ("LoCoMo's official token F1 scores the model's answers under --llm; the alternative is mem0-j\n"
                   "(mem0's LLM judge, a separately named score: F1 is still reported beside it)")
    computed: Mapping[str, ComputedGrader] = {LOCOMO_F1.name: ComputedGrader(LOCOMO_F1, "F1", _f1, require_stemmer)}
    judges: Mapping[str, JudgeGrader] = {judge.LOCOMO_J.name: judge.JUDGE}
    beside: Mapping[str, str] = {judge.LOCOMO_J.name: LOCOMO_F1.name}
    category_map: Mapping[str, str] = {str(k): v for k, v in LOCOMO_CATEGORIES.items()}
    category_label = "category"
    category_source = CATEGORY_SOURCE
    cluster_unit = "conversation"
    abstention = ("category 5 (adversarial) is an abstention probe graded on the answer alone; overall is reported "
                  "with and without it")

    def parse(self, path: Path, index: int, raw: Any) -> LocomoSample:
        """One sample of ``locomo10.json``."""
        return reader.parse_sample(path, index, raw)

    def unit(self, item: LocomoSample) -> Unit:
        """A conversation: its questions, from its first session."""
        return Unit(item.sample_id, tuple(q.id for q in item.questions), min(s.date for s in item.sessions))

    def variant(self, path: Path, first: LocomoSample, wanted: str | None) -> str:
        """``wanted`` if LoCoMo has it, else ``locomo10``."""
        return reader.check_variant(path, wanted)

    def scenario_id(self, unit_id: str) -> str:
        """``locomo-<sample id>``."""
        return mapping.scenario_id(unit_id)

    def probe_id(self, question_id: str) -> str:
        """The question id (``<sample id>-q<n>``) as a spec id."""
        return mapping.probe_id(question_id)

    def scenario(self, item: LocomoSample, chosen: set[str], epoch: datetime,
                 result: ImportResult) -> dict[str, Any] | None:
        """The conversation with its chosen questions (:func:`.mapping.scenario`)."""
        if not chosen.intersection(q.id for q in item.questions):
            return None
        return mapping.scenario(item, chosen, epoch, result)

    def table(self, probes: Sequence[ProbeResult], title: str, grader: str | None, score: Score) -> ScoreTable:
        """Means per category, overall with and without category 5 (:func:`.tables.table`)."""
        return tables.table(probes, title, grader, score)


BENCHMARK: Benchmark[LocomoSample] = Locomo()
"""The entry point ``memeval.benchmarks: locomo``."""
