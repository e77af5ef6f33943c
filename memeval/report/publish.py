"""Writing a run's files: run.json (the record), then run.md and run.html rendered from it."""

from __future__ import annotations

import os

from memeval.record import JsonObject, RunRecord
from memeval.report.files import json_text, write_text
from memeval.report.render import render


def publish(record: RunRecord, folder: str, templates: str | None = None, json_path: str | None = None,
            data: JsonObject | None = None) -> str:
    """Write ``run.json``, ``run.md`` and ``run.html`` into ``folder`` (and run.json also to
    ``json_path``); returns the Markdown report. ``data`` is ``record.to_json()`` when the caller
    has it already (a run masks it on the way), so that it is not encoded twice."""
    text = record.dumps() if data is None else json_text(data)
    write_text(os.path.join(folder, "run.json"), text)
    if json_path:
        write_text(json_path, text)
    report = render(record, "run.md.j2", templates)
    write_text(os.path.join(folder, "run.md"), report)
    write_text(os.path.join(folder, "run.html"), render(record, "run.html.j2", templates))
    return report
