"""A suite's errata file: the questions whose gold answer is disputed, resolved to the probes
the suite runs (see ``errata.schema.json``).

The file is declared once per suite: ``dataset: {errata: FILE}`` for a benchmark's question ids,
or a suite-level ``errata: FILE`` for a scenario suite's probes (an imported benchmark's too: an
id there may be a probe's ``x-question_id``); both paths are relative to the suite file. An id of
a dataset question the run does not select is kept aside (``unselected``); an id that names
nothing is ``unknown``: :func:`errata_warnings` reports it (``memeval validate --strict`` makes
it an error), and run.json and the report say so.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from typing import Any

from memeval.errors import SpecIssue
from memeval.spec.checks import Located, items
from memeval.spec.model import DatasetSource, Errata, Erratum, Origin, Suite
from memeval.spec.validate import schema_issues
from memeval.spec.yamlload import Marks

Index = dict[str, list[tuple[str, str]]]
"""An id an erratum may use → the (scenario id, probe id) pairs it names."""


def declared(data: dict[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    """Where the suite ``data`` declares an errata file (the YAML path) and the file as written:
    ``dataset.errata``, then ``errata`` (more than one is the caller's error to report)."""
    dataset = data.get("dataset")
    found: list[tuple[tuple[str | int, ...], str]] = []
    if isinstance(dataset, dict) and isinstance(dataset.get("errata"), str):
        found.append((("dataset", "errata"), dataset["errata"]))
    if isinstance(data.get("errata"), str):
        found.append((("errata",), data["errata"]))
    return found


def errata_file(suite_path: str, written: str) -> str:
    """The errata file ``written`` in suite ``suite_path``, resolved against the suite's folder."""
    return os.path.normpath(os.path.join(os.path.dirname(suite_path), written))


def parse_errata(file: str, data: Any, marks: Marks, raw: bytes) -> tuple[tuple[str, str, tuple[Erratum, ...]] | None,
                                                                          list[SpecIssue]]:
    """(sha256 of the file, what it covers, its entries) of a schema-valid errata file, or None
    and every issue found (schema errors, an id listed twice), each at its file:line:col."""
    issues = schema_issues(data, marks, "errata", file)
    if issues or not isinstance(data, dict):
        return None, issues
    entries, seen = [], set()
    for i, raw_entry in enumerate(data["questions"]):
        line, col = marks.at(("questions", i))
        if raw_entry["id"] in seen:
            issues.append(SpecIssue(file, line, col, f"questions[{i}].id",
                                    f"{raw_entry['id']!r} is listed twice; keep one entry per question"))
        seen.add(raw_entry["id"])
        entries.append(Erratum(raw_entry["id"], raw_entry["source"], raw_entry["reason"],
                               Origin(file, line, col, f"questions[{i}]")))
    return (hashlib.sha256(raw).hexdigest(), str(data["errata"]), tuple(entries)), issues


def scenario_index(located: Sequence[Located]) -> Index:
    """The ids a scenario suite's erratum may use: ``SCENARIO/PROBE``, a bare probe id and a
    probe's ``x-question_id``."""
    out: Index = {}
    for loc in located:
        sid = loc.data.get("scenario")
        for _, probe in items(loc.data, "probes"):
            pid = probe.get("id")
            if not isinstance(sid, str) or not isinstance(pid, str):
                continue
            for name in {f"{sid}/{pid}", pid, str(probe.get("x-question_id", pid))}:
                out.setdefault(name, []).append((sid, pid))
    return out


def resolve(file: str, parsed: tuple[str, str, tuple[Erratum, ...]], located: Sequence[Located],
            dataset: DatasetSource | None) -> Errata:
    """The errata resolved against the suite's scenarios and its dataset's questions."""
    sha256, covers, entries = parsed
    index = scenario_index(located)
    selected = set(dataset.questions) if dataset else set()
    for qid, sid, pid in dataset.keys if dataset else ():
        if qid in selected:
            index.setdefault(qid, []).append((sid, pid))
    in_file = {qid for qid, _, _ in dataset.keys} if dataset else set()
    disputed: dict[tuple[str, str], Erratum] = {}
    unselected: list[Erratum] = []
    unknown: list[Erratum] = []
    for entry in entries:
        for key in index.get(entry.id, []):
            disputed.setdefault(key, entry)
        if entry.id not in index:
            (unselected if entry.id in in_file else unknown).append(entry)
    return Errata(file, sha256, covers, entries, tuple((s, p, e) for (s, p), e in disputed.items()),
                  tuple(unselected), tuple(unknown))


def errata_warnings(suite: Suite) -> list[SpecIssue]:
    """One warning per erratum id that names nothing the suite or its dataset holds."""
    if suite.errata is None:
        return []
    return [SpecIssue(e.origin.file if e.origin else suite.errata.file, e.origin.line if e.origin else 0,
                      e.origin.column if e.origin else 0, e.origin.path if e.origin else "",
                      f"erratum {e.id!r} names no question of the suite or its dataset (a typo, or another "
                      "dataset's id?); it is not applied")
            for e in suite.errata.unknown]
