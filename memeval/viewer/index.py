"""The viewer's index: a SQLite file beside the runs with one row per run and one per KPI, so the
run list, the leaderboard and a trend answer without reading a single run.json.

The index is derived, never the record: :meth:`RunIndex.refresh` walks the folder, and a
run.json whose mtime and size are unchanged is skipped; one that changed is hashed (sha256), and
re-read with :func:`memeval.report.files.read_run` only when its content changed. A file that
vanished loses its rows. A run.json that cannot be read is kept as an ``unreadable`` row with its
one-line error, so it is shown, not silently dropped.

Only regular files inside the folder are indexed: ``os.walk`` does not follow symbolic links to
folders, and a run.json that is itself a link is indexed only when it resolves inside the folder.
A run's key is its folder relative to the runs folder (``agent/20261203-101500-ab12``); the
server opens a run only through :meth:`RunIndex.path_of` a key it finds here.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from memeval.errors import MemevalError, UsageError
from memeval.record import Kpi, RunRecord
from memeval.report.files import read_run
from memeval.score.setup import fingerprint, setup_of

INDEX_NAME = ".memeval-view.sqlite"
RUN_FILE = "run.json"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
  key TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER, sha256 TEXT, error TEXT,
  run_id TEXT, label TEXT, profile TEXT, suite TEXT, benchmark TEXT, engine TEXT, engine_version TEXT,
  answer_mode TEXT, created_at TEXT, setup TEXT, probes INTEGER, scenarios INTEGER, interrupted INTEGER);
CREATE TABLE IF NOT EXISTS kpis (
  key TEXT, grp TEXT, name TEXT, value REAL, unit TEXT, better TEXT, n INTEGER, lo REAL, hi REAL,
  PRIMARY KEY (key, grp, name));
CREATE INDEX IF NOT EXISTS kpis_by_name ON kpis (grp, name);
"""
RUN_COLUMNS = ("key", "error", "run_id", "label", "profile", "suite", "benchmark", "engine", "engine_version",
               "answer_mode", "created_at", "setup", "probes", "scenarios", "interrupted")


@dataclass(frozen=True)
class KpiRow:
    """One KPI of one run as the index holds it (value None: not measured)."""

    group: str
    name: str
    value: float | None
    unit: str
    better: str | None
    n: int
    ci95: tuple[float, float] | None


@dataclass(frozen=True)
class RunRow:
    """One run as the index holds it; ``error`` is set (and the rest empty) for an unreadable run.json."""

    key: str
    error: str | None
    run_id: str
    label: str
    profile: str | None
    suite: str
    benchmark: str | None
    engine: str
    engine_version: str
    answer_mode: str
    created_at: str
    setup: str
    probes: int
    scenarios: int
    interrupted: bool
    kpis: tuple[KpiRow, ...] = ()

    def kpi(self, group: str, name: str) -> KpiRow | None:
        """The KPI (group, name), or None when the run does not report it."""
        return next((k for k in self.kpis if k.group == group and k.name == name), None)


def answer_mode(record: RunRecord) -> str:
    """How the run's answers were produced: ``extractive`` (no model), ``model`` or ``model + judge``."""
    if record.answerer is None:
        return "extractive"
    return "model + judge" if record.answerer.judge is not None else "model"


class RunIndex:
    """The index of one runs folder, safe to share between threads (one connection, one lock).

    Raises (constructor):
        UsageError: ``root`` is not a folder, or the index file cannot be opened.
    """

    def __init__(self, root: str, db_path: str | None = None) -> None:
        if not os.path.isdir(root):
            raise UsageError(f"{root}: not a folder of runs (memeval run writes them to runs/)")
        self.root = os.path.realpath(root)
        path = db_path or os.path.join(self.root, INDEX_NAME)
        try:
            self._db = sqlite3.connect(path, check_same_thread=False)
            self._db.executescript(_SCHEMA)
        except sqlite3.Error as err:
            raise UsageError(f"{path}: cannot open the viewer's index: {err}") from None
        self._lock = threading.Lock()
        self.on_read: Callable[[str, tuple[int, int], RunRecord], None] | None = None
        """Called with (key, (mtime_ns, size), record) for every run.json the index reads, so a
        cache can keep the record it just paid to parse."""

    def close(self) -> None:
        """Close the index file."""
        with self._lock:
            self._db.close()

    def refresh(self) -> int:
        """Bring the index up to date with the folder; returns how many run.json files were (re)read."""
        with self._lock:
            seen: set[str] = set()
            read = 0
            stored = {row[0]: (row[1], row[2]) for row in self._db.execute("SELECT key, mtime_ns, size FROM runs")}
            for key, path, st in self._run_files():
                seen.add(key)
                if stored.get(key) != (st.st_mtime_ns, st.st_size):
                    read += self._update(key, path, st)
            for gone in set(stored) - seen:
                self._db.execute("DELETE FROM runs WHERE key = ?", (gone,))
                self._db.execute("DELETE FROM kpis WHERE key = ?", (gone,))
            self._db.commit()
            return read

    def _run_files(self) -> Iterator[tuple[str, str, os.stat_result]]:
        """(key, path, stat) of every run.json in the folder. The folders walked are real (links
        to folders are not followed, the root is resolved), so only a run.json that is itself a
        link needs resolving."""
        for folder, dirs, files in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            if RUN_FILE not in files:
                continue
            path = os.path.join(folder, RUN_FILE)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                if not self.inside(path):
                    continue
                st = os.stat(path)
            elif not stat.S_ISREG(st.st_mode):
                continue
            key = folder[len(self.root) + 1:] if folder != self.root else "."
            yield key.replace(os.sep, "/"), path, st

    def inside(self, path: str) -> bool:
        """Whether ``path`` resolves (links followed) to a regular file inside the runs folder."""
        real = os.path.realpath(path)
        return real.startswith(self.root + os.sep) and os.path.isfile(real)

    def _update(self, key: str, path: str, st: os.stat_result) -> int:
        row = self._db.execute("SELECT mtime_ns, size, sha256 FROM runs WHERE key = ?", (key,)).fetchone()
        with open(path, "rb") as fh:
            sha = hashlib.sha256(fh.read()).hexdigest()
        if row and row[2] == sha:
            self._db.execute("UPDATE runs SET mtime_ns = ?, size = ? WHERE key = ?", (st.st_mtime_ns, st.st_size, key))
            return 0
        self._db.execute("DELETE FROM kpis WHERE key = ?", (key,))
        try:
            record = read_run(path)
        except MemevalError as err:
            self._db.execute("INSERT OR REPLACE INTO runs (key, mtime_ns, size, sha256, error) VALUES (?, ?, ?, ?, ?)",
                             (key, st.st_mtime_ns, st.st_size, sha, str(err).replace(self.root + os.sep, "")))
            return 1
        self._store(key, st, sha, record)
        if self.on_read is not None:
            self.on_read(key, (st.st_mtime_ns, st.st_size), record)
        return 1

    def _store(self, key: str, st: os.stat_result, sha: str, r: RunRecord) -> None:
        values = (key, st.st_mtime_ns, st.st_size, sha, None, r.run_id, r.label, r.profile, r.suite.name,
                  r.benchmark.format if r.benchmark else None, r.engine.name, r.engine.version, answer_mode(r),
                  r.created_at, fingerprint(setup_of(r)), len(r.probes), len(r.scenarios), int(r.interrupted))
        self._db.execute(f"INSERT OR REPLACE INTO runs VALUES ({', '.join('?' * len(values))})", values)
        self._db.executemany("INSERT OR REPLACE INTO kpis VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             [_kpi_values(key, k) for k in r.kpis])

    def runs(self, kpis: tuple[tuple[str, str], ...] | None = None) -> list[RunRow]:
        """Every indexed run, newest first, each with ``kpis`` (group, name) pairs (None: all of them)."""
        with self._lock:
            rows = self._db.execute(f"SELECT {', '.join(RUN_COLUMNS)} FROM runs "
                                    "ORDER BY created_at DESC, key").fetchall()
            found: dict[str, list[KpiRow]] = {}
            query = "SELECT key, grp, name, value, unit, better, n, lo, hi FROM kpis"
            if kpis is not None:
                query += " WHERE " + " OR ".join("(grp = ? AND name = ?)" for _ in kpis) if kpis else " WHERE 0"
            for k in self._db.execute(query, [x for pair in kpis or () for x in pair]):
                found.setdefault(k[0], []).append(_kpi_row(k[1:]))
        return [_run_row(row, found.get(row[0], [])) for row in rows]

    def run(self, key: str) -> RunRow | None:
        """The indexed run with this key (every KPI), or None."""
        return next((r for r in self.runs() if r.key == key), None) if self.path_of(key) else None

    def path_of(self, key: str) -> str | None:
        """The run.json of an indexed, readable run, or None for any other key (nothing from the
        key itself is trusted: it must be a key the index holds)."""
        with self._lock:
            row = self._db.execute("SELECT key FROM runs WHERE key = ? AND error IS NULL", (key,)).fetchone()
        if row is None:
            return None
        path = os.path.join(self.root, *row[0].split("/"), RUN_FILE)
        return path if self.inside(path) else None


def _kpi_values(key: str, k: Kpi) -> tuple[object, ...]:
    lo, hi = k.ci95 if k.ci95 else (None, None)
    return (key, k.group, k.name, k.value, k.unit, k.better, k.n, lo, hi)


def _kpi_row(v: tuple[object, ...]) -> KpiRow:
    group, name, value, unit, better, n, lo, hi = v
    ci = (float(lo), float(hi)) if isinstance(lo, float) and isinstance(hi, float) else None
    return KpiRow(str(group), str(name), float(value) if isinstance(value, (int, float)) else None, str(unit),
                  str(better) if better else None, int(n) if isinstance(n, int) else 0, ci)


def _run_row(v: tuple[object, ...], kpis: list[KpiRow]) -> RunRow:
    d = dict(zip(RUN_COLUMNS, v))

    def text(name: str) -> str:
        return "" if d[name] is None else str(d[name])

    def maybe(name: str) -> str | None:
        return None if d[name] is None else str(d[name])

    return RunRow(key=text("key"), error=maybe("error"), run_id=text("run_id"), label=text("label"),
                  profile=maybe("profile"), suite=text("suite"),
                  benchmark=maybe("benchmark"), engine=text("engine"),
                  engine_version=text("engine_version"), answer_mode=text("answer_mode"), created_at=text("created_at"),
                  setup=text("setup"), probes=int(str(d["probes"] or 0)), scenarios=int(str(d["scenarios"] or 0)),
                  interrupted=bool(d["interrupted"]), kpis=tuple(kpis))
