"""``memeval import``: a verified benchmark file, or a selection of it, as editable memeval YAML."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from memeval.benchmarks import AnyBenchmark, benchmark
from memeval.benchmarks.base import Unit
from memeval.benchmarks.source import DatasetFile, Selection, iter_units, scan, select
from memeval.datasets.yamlout import ImportResult, epoch_of, prepare, safe_id, suite_document, write_yaml
from memeval.errors import UsageError


def import_dataset(fmt: str, path: str | Path, out: str | Path, selection: Selection,
                   sha256: str | None = None, variant: str | None = None) -> tuple[DatasetFile, ImportResult]:
    """Verify the file (raising :class:`UsageError` before writing anything), then write
    ``out/suite.yaml`` and ``out/scenarios/<id>.yaml`` for the selected questions. The second
    pass stops after the last selected unit, so a small selection from the front of a large file
    reads little of it twice."""
    dataset, chosen, units, epoch = open_selection(fmt, path, selection, sha256=sha256, variant=variant)
    bench = benchmark(dataset.format)
    result = ImportResult(Path(out))
    scenarios_dir = prepare(result.directory)
    pending = {u.id for u in units}
    units_read = iter_units(dataset)
    for unit in units_read:
        document = bench.scenario(unit, chosen, epoch, result)
        if document is not None:
            write_yaml(scenarios_dir / f"{document['scenario']}.yaml", _header(dataset), document)
            result.scenarios += 1
            result.probes += len(document["probes"])
        pending.discard(bench.unit(unit).id)
        if not pending:  # the rest of a multi-gigabyte file holds nothing selected
            units_read.close()
            break
    if not result.scenarios:
        raise UsageError(f"{dataset.path}: none of the {len(chosen)} selected questions can be mapped to a probe "
                         f"({result.unmapped[0]['reason']})")
    write_yaml(result.directory / "suite.yaml", _header(dataset),
               _suite(bench, dataset, selection, len(chosen), epoch, result), {"grader": bench.grader_note})
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


def unit_document(dataset: DatasetFile, unit: Any, chosen: set[str], epoch: datetime,
                  result: ImportResult) -> dict[str, Any] | None:
    """The scenario document for one ``unit`` of ``dataset`` and its ``chosen`` questions, or None
    when none of them maps to a probe (see :meth:`memeval.benchmarks.base.Benchmark.scenario`)."""
    return benchmark(dataset.format).scenario(unit, chosen, epoch, result)


def _suite(bench: AnyBenchmark, dataset: DatasetFile, selection: Selection, chosen: int, epoch: Any,
           result: ImportResult) -> dict[str, Any]:
    source: dict[str, Any] = {"format": dataset.format, "file": dataset.path.name, "variant": dataset.variant,
                              "sha256": dataset.sha256, "questions_in_file": dataset.questions,
                              "selected": chosen, "mapped": result.probes}
    picked = {k: v for k, v in (("only", list(selection.only)), ("sample", selection.sample),
                                ("seed", selection.seed if selection.sample is not None else None),
                                ("limit", selection.limit)) if v}
    if picked:
        source["selection"] = picked
    extra: dict[str, Any] = {"grader": bench.official_grader, "x-dataset": source, **bench.import_extra}
    extra["x-import_notes"] = list(bench.import_notes)
    if result.unmapped:
        extra["x-unmapped"] = result.unmapped
    name = f"{dataset.format}-{dataset.variant}"
    about = (f"{bench.title} ({dataset.variant}), "
             f"{result.probes} of {dataset.questions} questions, imported from {dataset.path.name}.")
    return suite_document(safe_id(name), about, epoch, extra)


def _header(dataset: DatasetFile) -> str:
    return (f"Imported by `memeval import {dataset.format}` from {dataset.path.name}\n"
            f"(variant {dataset.variant}, sha256 {dataset.sha256}). Ordinary memeval YAML: edit freely.")
