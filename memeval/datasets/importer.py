"""``memeval import``: a verified benchmark file, or a selection of it, as editable memeval YAML."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from memeval.datasets import lme_yaml, locomo_yaml
from memeval.datasets.judge import OFFICIAL
from memeval.datasets.model import LOCOMO_CATEGORIES, LmeInstance, LocomoSample
from memeval.datasets.source import DatasetFile, Selection, Unit, iter_units, scan, select
from memeval.datasets.yamlout import ImportResult, epoch_of, prepare, safe_id, suite_document, write_yaml
from memeval.errors import UsageError

# what the YAML language cannot say yet, written into every imported suite so a reader of the
# files knows which x- keys carry what (and why the probes' style is a placeholder)
NOTES = [
    "threads are past sessions: replay: true writes their turns as they stand (no recall before each turn)",
    "a probe's asked_at is LongMemEval's question_date (verbatim in x-question_date), or LoCoMo's last session date",
    "a probe's category is the question type (LongMemEval) or category name (LoCoMo; its id in x-category)",
    "exchange ids are LoCoMo's dia ids, or <session>:<turn index> for LongMemEval; a probe's evidence cites them",
    "style (lexical/paraphrase) is not given by the data: every probe says paraphrase",
    "abstention questions (_abs, LoCoMo category 5) are answer_only: the model's answer is graded, not the pack",
    "a probe's gold is the answer a judge grader reads where it is not expect[0] (an _abs explanation, LoCoMo's full answer)",
    "preference questions are judged probes: their rubric is the gold, no expect (no value a pack can hold), "
    "scored only by the longmemeval-judge grader under --llm",
]


GRADER_NOTES = {
    "longmemeval": "LongMemEval's official judge (one prompt per question type) scores the model's answers under --llm",
    "locomo": "LoCoMo's official token F1 scores the model's answers under --llm; the alternative is mem0-j\n"
              "(mem0's LLM judge, a separately named score: F1 is still reported beside it)",
}
"""The comment above the ``grader:`` an import writes."""


def category_map_text() -> str:
    """LoCoMo's category ids and names, as the importer maps them (one line)."""
    return "LoCoMo categories: " + ", ".join(f"{k} {v}" for k, v in LOCOMO_CATEGORIES.items()) + \
        " (snap-research/locomo#29; mem0's published mapping differs)"


def import_dataset(fmt: str, path: str | Path, out: str | Path, selection: Selection,
                   sha256: str | None = None, variant: str | None = None) -> tuple[DatasetFile, ImportResult]:
    """Verify the file (raising :class:`UsageError` before writing anything), then write
    ``out/suite.yaml`` and ``out/scenarios/<id>.yaml`` for the selected questions. The second
    pass stops after the last selected unit, so a small selection from the front of a large file
    reads little of it twice."""
    dataset, chosen, units, epoch = open_selection(fmt, path, selection, sha256=sha256, variant=variant)
    result = ImportResult(Path(out))
    scenarios_dir = prepare(result.directory)
    pending = {u.id for u in units}
    units_read = iter_units(dataset)
    for unit in units_read:
        document = unit_document(unit, chosen, epoch, result)
        if document is not None:
            write_yaml(scenarios_dir / f"{document['scenario']}.yaml", _header(dataset), document)
            result.scenarios += 1
            result.probes += len(document["probes"])
        pending.discard(unit.sample_id if isinstance(unit, LocomoSample) else unit.question_id)
        if not pending:  # the rest of a multi-gigabyte file holds nothing selected
            units_read.close()
            break
    if not result.scenarios:
        raise UsageError(f"{dataset.path}: none of the {len(chosen)} selected questions can be mapped to a probe "
                         f"({result.unmapped[0]['reason']})")
    write_yaml(result.directory / "suite.yaml", _header(dataset), _suite(dataset, selection, len(chosen), epoch, result),
               {"grader": GRADER_NOTES[dataset.format]})
    return dataset, result


def open_selection(fmt: str, path: str | Path, selection: Selection, sha256: str | None = None,
                   variant: str | None = None) -> tuple[DatasetFile, set[str], list[Unit], datetime]:
    """Verify the file and apply ``selection``: the file, the chosen question ids, the units
    holding them and the suite epoch (midnight of their earliest session). Shared by the
    import and a dataset-sourced suite, so both date every thread alike.

    Raises:
        UsageError: a file that fails verification, or a selection holding no questions.
    """
    dataset = scan(fmt, path, sha256=sha256, variant=variant)
    chosen = set(select(dataset, selection))
    if not chosen:
        raise UsageError(f"{dataset.path}: the selection holds no questions")
    units = [u for u in dataset.units if chosen.intersection(u.question_ids)]
    return dataset, chosen, units, epoch_of(min(u.earliest for u in units))


def unit_document(unit: LmeInstance | LocomoSample, chosen: set[str], epoch: datetime,
                  result: ImportResult) -> dict[str, Any] | None:
    """The scenario document for one unit and its ``chosen`` questions, or None when none of
    them maps to a probe (each unmapped question is added to ``result.unmapped``)."""
    if isinstance(unit, LocomoSample):
        return locomo_yaml.scenario(unit, chosen, epoch, result) if chosen.intersection(q.id for q in unit.questions) else None
    if unit.question_id not in chosen:
        return None
    reason = lme_yaml.unmapped_reason(unit)
    if reason:
        result.unmapped.append({"question_id": unit.question_id, "question_type": unit.question_type,
                                "question": unit.question, "reason": reason})
        return None
    return lme_yaml.scenario(unit, epoch, result)


def _suite(dataset: DatasetFile, selection: Selection, chosen: int, epoch: Any, result: ImportResult) -> dict[str, Any]:
    source: dict[str, Any] = {"format": dataset.format, "file": dataset.path.name, "variant": dataset.variant,
                              "sha256": dataset.sha256, "questions_in_file": dataset.questions,
                              "selected": chosen, "mapped": result.probes}
    picked = {k: v for k, v in (("only", list(selection.only)), ("sample", selection.sample),
                                ("seed", selection.seed if selection.sample is not None else None),
                                ("limit", selection.limit)) if v}
    if picked:
        source["selection"] = picked
    extra: dict[str, Any] = {"grader": OFFICIAL[dataset.format], "x-dataset": source}
    if dataset.format == "locomo":
        extra["x-category_map"] = {k: v for k, v in LOCOMO_CATEGORIES.items()}
    extra["x-import_notes"] = NOTES
    if result.unmapped:
        extra["x-unmapped"] = result.unmapped
    name = f"{dataset.format}-{dataset.variant}"
    about = (f"{'LongMemEval' if dataset.format == 'longmemeval' else 'LoCoMo'} ({dataset.variant}), "
             f"{result.probes} of {dataset.questions} questions, imported from {dataset.path.name}.")
    return suite_document(safe_id(name), about, epoch, extra)


def _header(dataset: DatasetFile) -> str:
    return (f"Imported by `memeval import {dataset.format}` from {dataset.path.name}\n"
            f"(variant {dataset.variant}, sha256 {dataset.sha256}). Ordinary memeval YAML: edit freely.")
