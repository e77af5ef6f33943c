"""The sweep's summary: summary.json (cells, skipped profiles, the comparison), summary.md (the
same, rendered by ``summary.md.j2``, which extends the compare report) and summary.html (by
``summary.html.j2``: the coloured grid, the frontier chart, the flipped probes)."""

from __future__ import annotations

import os
from typing import cast

from memeval.comparison import compare_records, render_comparison
from memeval.comparison.setup import SWEEP_SUBJECT, split_comparable
from memeval.comparison.table import Comparison
from memeval.record import JsonObject, RunRecord
from memeval.report.files import read_run, write_json, write_text
from memeval.report.view import DASH
from memeval.spec.matrix import Matrix
from memeval.sweep.cell import CellResult

Summary = JsonObject
"""summary.json's content: JSON data written as it is built."""


def summarise(matrix: Matrix, results: list[CellResult], skipped: list[str],
              shard: tuple[int, int] | None = None) -> Summary:
    """summary.json: the matrix, every cell's outcome (with its model calls, cross-run cache hits
    and in-run reuses, :func:`model_use`),
    skipped profiles, the comparison of the cells that completed (null when none did), and the
    ``--shard`` slice (null: every cell); a cell whose scoring setup differs from the first
    one's beyond its flags is left out of the comparison and listed as skipped."""
    read = {id(r): read_run(os.path.join(r.cell.folder, "run.json")) for r in results if r.status == "ok"}
    records, unfair = split_comparable(list(read.values()))
    return {
        "matrix": matrix.name, "about": matrix.about, "engine": matrix.engine.name, "suite": matrix.suite,
        "cells": [{**r.to_json(), **model_use(read.get(id(r)))} for r in results],
        "skipped": skipped + unfair,
        "comparison": compare_records(records, subject=SWEEP_SUBJECT) if records else None,
        "shard": None if shard is None else {"index": shard[0], "count": shard[1]},
    }


def model_use(record: RunRecord | None) -> JsonObject:
    """A cell's model use over its answerer and judge: ``model_calls`` (asked of the model),
    ``cache_hits`` (served by entries an earlier run or repeat wrote: 0 on every repeat of an
    independent sweep) and ``in_run_reuses`` (a prompt the run had already asked, e.g. one probe
    in both phases; null for an older record that counted them as hits). All null without ``--llm``."""
    answerer = record.answerer if record is not None else None
    if answerer is None:
        return {"model_calls": None, "cache_hits": None, "in_run_reuses": None}
    caches = [side.cache for side in (answerer, answerer.judge) if side is not None]
    reused = [c.reused for c in caches]
    return {"model_calls": sum(c.misses for c in caches), "cache_hits": sum(c.hits for c in caches),
            "in_run_reuses": None if None in reused else sum(r for r in reused if r is not None)}


def write_summary(folder: str, summary: Summary, templates: str | None = None) -> str:
    """Write summary.json, summary.md and summary.html into ``folder``; return the Markdown."""
    cells = [_cell_row(c) for c in cast(list[JsonObject], summary["cells"])]
    comparison = cast(Comparison | None, summary["comparison"])
    text = render_comparison(comparison, "summary.md.j2", templates, sweep=summary, cells=cells)
    write_json(os.path.join(folder, "summary.json"), summary)
    write_text(os.path.join(folder, "summary.md"), text)
    write_text(os.path.join(folder, "summary.html"),
               render_comparison(comparison, "summary.html.j2", templates, sweep=summary, cells=cells))
    return text


def _cell_row(c: JsonObject) -> JsonObject:
    """One row of the cells table, formatted."""
    seconds = c["seconds"]
    return {**c, "reason": str(c["reason"] or DASH).replace("|", "\\|"), "port": c["port"] or DASH,
            **{key: DASH if c.get(key) is None else c[key] for key in ("model_calls", "cache_hits", "in_run_reuses")},
            "seconds": f"{seconds:.1f}" if isinstance(seconds, (int, float)) else DASH}
