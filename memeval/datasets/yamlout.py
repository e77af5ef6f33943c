"""Write an imported benchmark as ordinary memeval YAML: ``suite.yaml`` plus one scenario file
per unit (a question with its own haystack, a conversation) under ``scenarios/``.

Files are written one unit at a time, so an import never holds more than one unit in memory.
What the YAML language cannot say (the file's own date text, ids and category numbers) is
carried in ``x-`` keys so nothing is lost. Each benchmark's mapping
(:meth:`memeval.benchmarks.base.Benchmark.scenario`) builds its documents from these helpers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from memeval.errors import UsageError

try:  # libyaml's emitter is several times faster; the output is the same YAML
    from yaml import CSafeDumper as _Dumper
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
STYLE = "paraphrase"  # the data says nothing of lexical overlap; see the import notes
STYLE_NOTE = "style (lexical/paraphrase) is not given by the data: every probe says paraphrase"
"""The import note for :data:`STYLE`."""
REPLAY_NOTE = "threads are past sessions: replay: true writes their turns as they stand (no recall before each turn)"
"""The import note for a mapping that writes a file's sessions as ``replay: true`` threads."""


def safe_id(raw: str, prefix: str = "") -> str:
    """``raw`` as a spec id (letters, digits, ``_`` and ``-``; at most 64; starts alphanumeric)."""
    cleaned = _UNSAFE.sub("-", raw).strip("-_") or "x"
    out = (prefix + cleaned)[:64]
    return out if out[0].isalnum() else ("x" + out)[:64]


def unique_ids(raw_ids: list[str]) -> list[str]:
    """:func:`safe_id` of each, with ``-2``, ``-3`` … added where two would collide."""
    out, seen = [], set()
    for raw in raw_ids:
        base = safe_id(raw)
        candidate, n = base, 1
        while candidate in seen:
            n += 1
            candidate = f"{base[:60]}-{n}"
        seen.add(candidate)
        out.append(candidate)
    return out


def epoch_of(earliest: datetime) -> datetime:
    """The suite epoch: midnight of the earliest selected session's day (dates are naive, read as UTC)."""
    return earliest.replace(hour=0, minute=0, second=0, microsecond=0)


def day_of(epoch: datetime, when: datetime) -> int:
    """Whole days from the epoch to ``when`` (the language dates threads by day only)."""
    return (when.date() - epoch.date()).days


@dataclass
class ImportResult:
    """What an import wrote: scenario and probe counts, and the questions it could not map."""

    directory: Path
    scenarios: int = 0
    probes: int = 0
    unmapped: list[dict[str, str]] = field(default_factory=list)
    dropped_turns: int = 0


def prepare(directory: Path) -> Path:
    """Create ``directory/scenarios``; refuse one that already holds scenario files (the suite's
    include glob would pick them up)."""
    scenarios = directory / "scenarios"
    if scenarios.is_dir() and any(scenarios.glob("*.yaml")):
        raise UsageError(f"{scenarios}: already holds scenario files; import into an empty directory")
    scenarios.mkdir(parents=True, exist_ok=True)
    return scenarios


def write_yaml(path: Path, header: str, document: dict[str, Any], notes: dict[str, str] | None = None) -> None:
    """One YAML file: ``header`` as comment lines, then the document (key order kept), each
    top-level key named in ``notes`` preceded by its note as a comment line."""
    body = yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    for key, note in (notes or {}).items():
        body = re.sub(rf"^{re.escape(key)}:", lambda m: f"{_comment(note)}{m.group(0)}", body, count=1, flags=re.M)
    path.write_text(_comment(header) + body, encoding="utf-8")


def _comment(text: str) -> str:
    return "".join(f"# {line}\n" if line else "#\n" for line in text.splitlines())


def suite_document(name: str, about: str, epoch: datetime, extra: dict[str, Any]) -> dict[str, Any]:
    """The suite file: every scenario file under ``scenarios/``, dated from ``epoch``."""
    return {"suite": safe_id(name), "about": about, "include": ["scenarios/*.yaml"],
            "defaults": {"epoch": epoch.strftime("%Y-%m-%dT%H:%M:%SZ")}, **extra}


def clock(when: datetime) -> str:
    """A thread's time of day (``HH:MM``), which the day number leaves out."""
    return when.strftime("%H:%M")


def iso(when: datetime) -> str:
    """A naive file date as ISO 8601 (kept beside the day so the time of day is not lost)."""
    return when.strftime("%Y-%m-%dT%H:%M")
