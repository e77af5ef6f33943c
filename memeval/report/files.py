"""Writing report and record files safely (atomic replace, no escaping the folder), and reading a
run's record back; where a run's files go is :mod:`memeval.runner.output`."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

from memeval.errors import UsageError
from memeval.record import RunRecord

def write_text(path: str, text: str) -> None:
    """Write a file atomically: a reader sees the old or the new content, never half."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=os.path.basename(path))
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp's 0600 would hide reports from CI uploads and shared folders
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _umask() -> int:
    """The process's umask, read without changing it where Linux shows it (setting it, even back,
    would race with files other threads create)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def json_line(data: Any) -> str:
    """``data`` as one line of key-stable JSON (for a script reading stdout)."""
    return json.dumps(data, ensure_ascii=False, sort_keys=False)


def json_text(data: Any) -> str:
    """``data`` as a JSON file's text: two-space indented, key-stable, non-ASCII kept, a final
    newline (run.json's form, :meth:`~memeval.record.RunRecord.dumps`)."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_json(path: str, data: Any) -> None:
    """Write JSON atomically, pretty-printed and key-stable."""
    write_text(path, json_text(data))


def read_run(path: str) -> RunRecord:
    """Read a run.json.

    Raises:
        UsageError: the file cannot be read or is not JSON; RecordError (a UsageError): it is not
            a run record this memeval reads (the message names the file and what is wrong).
    """
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as err:
        raise UsageError(f"{path}: cannot read: {err.strerror or err}") from None
    except ValueError as err:
        raise UsageError(f"{path}: not JSON ({err})") from None
    return RunRecord.from_json(data, path)
