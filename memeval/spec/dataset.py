"""A suite's ``dataset:`` source, verified at load time (before any engine call).

The file is scanned whole (format, sha256, variant, truncation) by the same code as
``memeval import``; a file that fails is reported as a spec issue at the ``dataset:`` key (or
at the field the reader names), so the run stops with exit 2 naming the file and the field.
"""

from __future__ import annotations

import os
import re
from typing import Any

from memeval.datasets.importer import open_selection
from memeval.datasets.source import Selection
from memeval.datasets.yamlout import probe_id, scenario_id
from memeval.errors import SpecIssue, UsageError
from memeval.spec.model import DatasetSource, Origin
from memeval.spec.yamlload import Marks

_FIELD = re.compile(r"field '([a-z_0-9]+)'")


def load_dataset(raw: dict[str, Any], path: str, marks: Marks) -> tuple[DatasetSource | None, list[SpecIssue]]:
    """The verified source ``raw`` (the schema-valid ``dataset:`` mapping of suite ``path``)
    declares, or None and the one issue saying why the file cannot be used."""
    where = os.path.normpath(os.path.join(os.path.dirname(path), raw["path"]))
    selection = Selection(only=tuple(raw.get("only", ())), limit=raw.get("limit"), sample=raw.get("sample"),
                          seed=raw.get("seed", 0))
    try:
        dataset, chosen, units, epoch = open_selection(raw["format"], where, selection, sha256=raw.get("sha256"),
                                                       variant=raw.get("variant"))
    except UsageError as err:
        found = _FIELD.search(str(err))
        key = found.group(1) if found and found.group(1) in raw else None
        line, col = marks.at(("dataset", key) if key else ("dataset",), key=key is None)
        return None, [SpecIssue(path, line, col, f"dataset.{key}" if key else "dataset", str(err))]
    line, col = marks.at(("dataset",), key=True)
    questions = tuple(q for u in dataset.units for q in u.question_ids if q in chosen)
    return DatasetSource(
        format=dataset.format, path=where, variant=dataset.variant, sha256=dataset.sha256, questions=questions,
        units=tuple(scenario_id(dataset.format, u.id) for u in units), epoch=epoch.strftime("%Y-%m-%dT%H:%M:%SZ"),
        only=selection.only, limit=selection.limit, sample=selection.sample, seed=selection.seed,
        grader=raw.get("grader"), origin=Origin(path, line, col, "dataset"),
        keys=tuple((q, scenario_id(dataset.format, u.id), probe_id(dataset.format, q)) for u in dataset.units
                   for q in u.question_ids),
    ), []
