"""The run journal: results appended to disk as each scenario finishes, so a killed run loses at
most the scenario it was in and can be resumed.

``<out>/checkpoint.jsonl`` holds one JSON object per line: a header (suite hash, engine, the
scenarios asked for, label, run id), then ``started`` (a scenario began, with its engine tenants)
and ``finished`` (a :class:`ScenarioEntry`: its result with usage, probe results and timings) lines. Each line is flushed and
fsynced before the run goes on. A resume keeps the scenarios that finished ok and runs the
others again (errored or never finished), after cleaning their tenants.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, TextIO

from memeval.engines.base import Engine
from memeval.errors import EngineError, Unsupported, UsageError
from memeval.record import ProbeResult, RecordError, ScenarioResult, TimingLabel
from memeval.record.codec import from_json, to_json
from memeval.runner.cleanup import clear_tenant
from memeval.runner.options import RunOptions
from memeval.secrets import mask_json
from memeval.spec.model import Suite

FILE = "checkpoint.jsonl"
_MATCH = ("suite_sha256", "engine", "only")


@dataclass(frozen=True)
class ScenarioEntry:
    """One finished scenario as the journal keeps it: enough to rebuild its part of the record."""

    scenario: ScenarioResult
    """Its result, engine usage included."""
    probes: tuple[ProbeResult, ...]
    """Its probe results, in run order."""
    timings: dict[TimingLabel, tuple[float, ...]]
    """Its timing samples, ms."""


class FinishedThenInterrupted(KeyboardInterrupt):
    """A Ctrl-C that came while a scenario was cleaning up: ``entry`` is that scenario, finished
    (and journaled); the run keeps it and then stops."""

    def __init__(self, entry: ScenarioEntry):
        super().__init__()
        self.entry = entry


class Journal:
    """An open checkpoint file. Use :meth:`start` for a new run and :meth:`resume` to continue one."""

    def __init__(self, path: str, header: dict[str, Any], done: dict[str, ScenarioEntry],
                 leftovers: dict[str, dict[str, str]]):
        self.path, self.header, self.done, self.leftovers = path, header, done, leftovers
        self._lock = threading.Lock()

    @property
    def run_id(self) -> str:
        """The run id every scenario's tenants are named with (kept across a resume)."""
        return str(self.header["run_id"])

    @property
    def label(self) -> str:
        """The run's label ("" in a journal written before labels were kept)."""
        return str(self.header.get("label") or "")

    @classmethod
    def start(cls, folder: str, header: dict[str, Any]) -> "Journal":
        """Begin a fresh journal in ``folder``, replacing any earlier one."""
        path = os.path.join(folder, FILE)
        with _open(path, os.O_TRUNC) as fh:
            _append(fh, {"kind": "header", **header})
        return cls(path, header, {}, {})

    @classmethod
    def resume(cls, folder: str, header: dict[str, Any]) -> "Journal":
        """Reopen the journal in ``folder``: scenarios that finished ``ok`` are done; those that
        errored or never finished are run again, after their tenants are cleaned.

        Raises:
            UsageError: there is no journal, or it belongs to another suite, engine or --only.
        """
        path = os.path.join(folder, FILE)
        lines = _read(path)
        old = lines[0]
        for key in _MATCH:
            if old.get(key) != header.get(key):
                raise UsageError(f"--resume {folder}: the run used {_shown(key, old.get(key))}, this one "
                                 f"{_shown(key, header.get(key))}; resume with the same suite, engine and --only, "
                                 "or start a new run")
        # An errored scenario runs again: the failure that stopped the run (a server gone, a
        # settle timeout) is what resuming is for. Its tenants are cleaned like a killed one's,
        # since its own cleanup may have failed with the server.
        finished = [_entry(e, path) for e in lines[1:] if e["kind"] == "finished"]
        done = {e.scenario.id: e for e in finished if e.scenario.ok}
        started = {e["scenario"]: e["tenants"] for e in lines[1:] if e["kind"] == "started"}
        leftovers = {sid: tenants for sid, tenants in started.items() if sid not in done}
        return cls(path, {k: v for k, v in old.items() if k != "kind"}, done, leftovers)

    def started(self, scenario: str, tenants: dict[str, str]) -> None:
        """Record that a scenario began writing under these engine tenants."""
        self._write({"kind": "started", "scenario": scenario, "tenants": tenants})

    def finished(self, entry: ScenarioEntry) -> None:
        """Record a finished scenario."""
        body = to_json(entry)
        assert isinstance(body, dict)
        self._write({"kind": "finished", **body})

    def clean_leftovers(self, engine: Engine, capabilities: frozenset[str]) -> list[str]:
        """Remove what a killed run's unfinished scenarios left in the engine; returns notes on
        anything that could not be removed."""
        notes = []
        for sid, tenants in self.leftovers.items():
            for ns in tenants.values():
                try:
                    clear_tenant(engine, capabilities, ns)
                except (EngineError, Unsupported) as err:
                    notes.append(f"{sid}: could not clean tenant {ns}: {err}")
        return notes

    def _write(self, entry: dict[str, Any]) -> None:
        with self._lock, _open(self.path, os.O_APPEND) as fh:  # scenarios on --jobs threads journal too
            _append(fh, entry)


def open_journal(folder: str, suite: Suite, options: RunOptions, resume: bool, run_id: str | None = None,
                 request: dict[str, Any] | None = None) -> Journal:
    """A new journal in ``folder``, or the one there when ``resume``. ``request`` (kept in the
    header) is what the command line asked for, so a resume can repeat it (see :func:`read_header`)."""
    header = {"suite": suite.name, "suite_sha256": suite.sha256, "engine": options.engine, "only": list(options.only),
              "label": options.label, "run_id": run_id or new_run_id(), "created_at": utc_now(), "request": request or {}}
    return Journal.resume(folder, header) if resume else Journal.start(folder, header)


def utc_now() -> str:
    """Now, as run.json's ``created_at`` reads (``2026-09-01T09:00:00Z``)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_header(folder: str) -> dict[str, Any]:
    """The header of the journal in ``folder``. Raises UsageError when there is none."""
    return _read(os.path.join(folder, FILE))[0]


def new_run_id() -> str:
    """A run id: the start time (epoch seconds) and a random part, so two runs started in the
    same second on one server never share engine tenants (one's cleanup would erase the other's)."""
    return f"{int(time.time())}-{secrets.token_hex(3)}"


def _shown(key: str, value: Any) -> str:
    """A journal header value as a person reads it: ``--only a,b`` or "every scenario", not ``[]``."""
    if key == "only":
        return f"--only {','.join(value)}" if value else "every scenario (no --only)"
    names = {"suite_sha256": "suite (sha256)"}
    return f"{names.get(key, key)} {value!r}"


def _open(path: str, mode: int) -> TextIO:
    """The journal for writing, never through a symbolic link (it would overwrite whatever the
    link points at). Raises UsageError for a link."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | mode, 0o644)
    except OSError as err:
        raise UsageError(f"{path}: cannot write the journal ({err.strerror}; a symbolic link is refused)") from None
    return open(fd, "w" if mode == os.O_TRUNC else "a", encoding="utf-8")


def _append(fh: TextIO, entry: dict[str, Any]) -> None:
    fh.write(json.dumps(mask_json(entry), ensure_ascii=False) + "\n")
    fh.flush()
    os.fsync(fh.fileno())


def _entry(line: dict[str, Any], path: str) -> ScenarioEntry:
    """A finished line read back. A journal written before usage moved into the scenario result
    kept it beside it: it is moved in."""
    body = {k: v for k, v in line.items() if k != "kind"}
    if "usage" in body:
        body["scenario"] = {**body["scenario"], "usage": body.pop("usage")}
    try:
        return from_json(ScenarioEntry, body, "finished")
    except RecordError as err:
        raise UsageError(f"--resume: {path}: {err}; start a new run") from None


def _read(path: str) -> list[dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as fh:
            raw = fh.read().splitlines()
    except OSError:
        raise UsageError(f"--resume: no checkpoint at {path}; nothing to resume") from None
    lines = []
    for n, text in enumerate(raw, 1):
        try:
            lines.append(json.loads(text))
        except ValueError:
            if n == len(raw):
                break  # a line cut short by the kill: the scenario it recorded runs again
            raise UsageError(f"--resume: {path} line {n} is damaged; start a new run") from None
    if not lines or lines[0].get("kind") != "header":
        raise UsageError(f"--resume: {path} has no header; start a new run")
    return lines
