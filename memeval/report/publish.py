"""Writing a run's files: run.json (the record), then run.md and run.html rendered from it."""

from __future__ import annotations

import os
from typing import Any

from memeval.report.files import write_json, write_text
from memeval.report.render import render


def publish(record: dict[str, Any], folder: str, templates: str | None = None, json_path: str | None = None) -> str:
    """Write ``run.json``, ``run.md`` and ``run.html`` into ``folder`` (and run.json also to
    ``json_path``); returns the Markdown report."""
    write_json(os.path.join(folder, "run.json"), record)
    if json_path:
        write_json(json_path, record)
    report = render(record, "run.md.j2", templates)
    write_text(os.path.join(folder, "run.md"), report)
    write_text(os.path.join(folder, "run.html"), render(record, "run.html.j2", templates))
    return report
