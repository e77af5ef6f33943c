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
from memeval.datasets.judge import GRADER_FORMAT, OFFICIAL, TEMPLATE_KEYS, template_file
from memeval.datasets.yamlout import probe_id, scenario_id
from memeval.errors import SpecIssue, UsageError
from memeval.util.suggest import did_you_mean
from memeval.spec.model import DatasetSource, Origin
from memeval.spec.yamlload import Marks
from memeval.vocab import DATASET_FORMATS, DatasetFormat

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
    prompts, issues = grader_issues(raw, path, marks, dataset.format, ("dataset",))
    if issues:
        return None, issues
    line, col = marks.at(("dataset",), key=True)
    questions = tuple(q for u in dataset.units for q in u.question_ids if q in chosen)
    fmt: DatasetFormat = raw["format"]  # one of them (the schema's enum), and the file was read as it
    return DatasetSource(
        format=fmt, path=where, variant=dataset.variant, sha256=dataset.sha256, questions=questions,
        units=tuple(scenario_id(dataset.format, u.id) for u in units), epoch=epoch.strftime("%Y-%m-%dT%H:%M:%SZ"),
        only=selection.only, limit=selection.limit, sample=selection.sample, seed=selection.seed,
        grader=raw.get("grader"), prompts=prompts, origin=Origin(path, line, col, "dataset"),
        keys=tuple((q, scenario_id(dataset.format, u.id), probe_id(dataset.format, q)) for u in dataset.units
                   for q in u.question_ids),
    ), []


def suite_grader(data: dict[str, Any], path: str, marks: Marks) -> list[SpecIssue]:
    """The issues of a suite-level ``grader:`` / ``prompts:`` (the schema-valid suite mapping
    ``data`` of ``path``): they belong to a suite ``memeval import`` wrote (an ``x-dataset``
    note naming its format) and are checked as ``dataset.grader`` / ``dataset.prompts`` are."""
    declared = [k for k in ("grader", "prompts") if k in data]
    if not declared:
        return []
    line, col = marks.at((declared[0],), key=True)
    if isinstance(data.get("dataset"), dict):
        return [SpecIssue(path, line, col, declared[0], f"this suite has a dataset: block: move {declared[0]}: under "
                          "dataset: (a suite-level grader is for a suite memeval import wrote)")]
    note = data.get("x-dataset")
    fmt = note.get("format") if isinstance(note, dict) else None
    if fmt not in DATASET_FORMATS:
        return [SpecIssue(path, line, col, declared[0], f"{declared[0]}: grades a benchmark's questions: declare it under "
                          "dataset: (with the file's format and path), or in a suite memeval import wrote (its "
                          "x-dataset note names the format)")]
    return grader_issues(data, path, marks, str(fmt), ())[1]


def grader_issues(raw: dict[str, Any], path: str, marks: Marks, fmt: str,
                  at: tuple[str, ...]) -> tuple[tuple[tuple[str, str], ...], list[SpecIssue]]:
    """The ``grader:`` of mapping ``raw`` (at key path ``at`` of suite ``path``) checked against
    the benchmark ``fmt``, and its ``prompts:`` templates as (key, file resolved against the
    suite's folder), each key one the grader judges with and each file readable text; else the
    issues saying what to fix."""
    grader = raw.get("grader")
    if GRADER_FORMAT.get(grader or "", fmt) != fmt:
        line, col = marks.at((*at, "grader"))
        return (), [SpecIssue(path, line, col, _dotted(at, "grader"), f"{grader} grades {GRADER_FORMAT[grader or '']} "
                              f"questions, and this file is {fmt}: use {OFFICIAL[fmt]} (or memeval)")]
    given: dict[str, str] = raw.get("prompts") or {}
    if not given:
        return (), []
    keys = TEMPLATE_KEYS.get(grader or "", ())
    if not keys:
        line, col = marks.at((*at, "prompts"), key=True)
        return (), [SpecIssue(path, line, col, _dotted(at, "prompts"), "prompts are for a judge grader: add grader: "
                              f"{'longmemeval-judge' if fmt == 'longmemeval' else 'mem0-j'} (this file is {fmt})")]
    issues, out = [], []
    for key, file in given.items():
        line, col = marks.at((*at, "prompts", key), key=True)
        if key not in keys:
            issues.append(SpecIssue(path, line, col, _dotted(at, f"prompts.{key}"), f"unknown prompt key {key!r} for "
                                    f"{grader}{did_you_mean(key, list(keys))}; use one of {', '.join(keys)}"))
            continue
        where = os.path.normpath(os.path.join(os.path.dirname(path), file))
        problem = _unusable(where)
        if problem:
            line, col = marks.at((*at, "prompts", key))
            issues.append(SpecIssue(path, line, col, _dotted(at, f"prompts.{key}"), problem))
        out.append((key, where))
    return tuple(out), issues


def _dotted(at: tuple[str, ...], key: str) -> str:
    return ".".join((*at, key))


def _unusable(file: str) -> str | None:
    """Why the template ``file`` cannot judge (unreadable, or placeholders it cannot fill), with
    the fix; None when it can. Read and filled now, so it stops the run before any engine call."""
    try:
        template = template_file(file)
    except UsageError as err:
        return f"{err}; give a text file's path relative to the suite file"
    try:
        template.render("question", "answer", "response")
    except UsageError as err:
        return str(err)
    return None
