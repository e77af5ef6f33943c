"""Where one run's files go, so that no run silently replaces another run's record.

- By default a run writes to ``runs/<label>/<run id>/``, a folder of its own, and
  ``runs/<label>/latest`` (a symbolic link) names the newest one.
- ``--out DIR`` is exactly DIR, refused when DIR already holds a run's record (``run.json`` or
  ``checkpoint.jsonl``) unless ``--force``; ``--resume DIR`` continues the run there.
- ``--resume`` takes a run's folder, or ``runs/<label>`` (its ``latest`` run).
- ``--json PATH`` onto an existing file is refused unless the file is a run.json of this same run
  (a resume), or another run's run.json and ``--force``; a file that is no run.json never is.
- A run holds its folder (an exclusive ``flock`` on ``<folder>/.memeval.lock``) from its start to
  its last file: a second run into the same folder is refused while the first is alive.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator

from memeval.errors import UsageError
from memeval.report.files import read_run
from memeval.runner.options import check_label
from memeval.runner.checkpoint import FILE as JOURNAL

LATEST = "latest"
LOCK = ".memeval.lock"
RECORD_FILES = ("run.json", JOURNAL)


def run_folder(label: str, run_id: str, out: str | None, force: bool) -> str:
    """The folder a new run writes to, created: ``out``, else ``runs/<label>/<run id>`` (and
    ``runs/<label>/latest`` then points at it).

    Raises:
        UsageError: the label is not a safe folder name, or ``out`` holds a run's record and
            ``force`` is not set.
    """
    check_label(label)
    if out is not None:
        held = [name for name in RECORD_FILES if os.path.lexists(os.path.join(out, name))]
        if held and in_use(out):  # neither --resume nor --force can have it while that run lives
            raise UsageError(f"--out {out}: in use by another memeval run; wait for it to end, or name another "
                             "folder")
        if held and not force:
            raise UsageError(f"--out {out}: already holds a run ({held[0]}); --resume {out} continues it, "
                             "--force replaces it, or name another folder")
        os.makedirs(out, exist_ok=True)
        return out
    base = os.path.join("runs", label)
    folder = os.path.join(base, run_id)
    os.makedirs(folder)  # a new run id: the folder cannot exist yet
    _link_latest(base, run_id)
    return folder


@contextlib.contextmanager
def folder_lock(folder: str) -> Iterator[None]:
    """Hold ``folder`` for one run (released when the block ends, or when the process dies).

    Raises:
        UsageError: another live run holds it, or the lock file is a symbolic link.
    """
    try:
        fd = os.open(os.path.join(folder, LOCK), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as err:
        raise UsageError(f"{folder}: cannot lock the run folder ({err.strerror})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(f"{folder}: in use by another memeval run; wait for it to end, or name another "
                             "folder") from None
        yield
    finally:
        os.close(fd)


def in_use(folder: str) -> bool:
    """Whether a live run holds ``folder`` (its lock taken); probing creates no file."""
    try:
        fd = os.open(os.path.join(folder, LOCK), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing releases a lock the probe took
    return False


def resume_folder(path: str) -> str:
    """The run folder ``--resume path`` means: ``path`` itself when it holds a journal, else the
    run its ``latest`` link names (``--resume runs/<label>``)."""
    latest = os.path.join(path, LATEST)
    if not os.path.lexists(os.path.join(path, JOURNAL)) and os.path.islink(latest):
        return os.path.join(path, os.readlink(latest))
    return path


def check_json_target(path: str, run_id: str, force: bool) -> None:
    """Refuse ``--json path`` when writing it would replace something that is not this run's record.

    Raises:
        UsageError: ``path`` is a folder or a file that is not a run.json, or another run's
            run.json and ``force`` is not set.
    """
    if not os.path.lexists(path):
        return
    if not os.path.isfile(path):
        raise UsageError(f"--json {path}: exists and is not a regular file; name a new file")
    try:
        held = read_run(path).run_id
    except UsageError:
        raise UsageError(f"--json {path}: exists and is not a run.json; it is left alone, name a new file") from None
    if held != run_id and not force:
        raise UsageError(f"--json {path}: holds the record of run {held}; --force replaces it, or name a new file")


def _link_latest(base: str, run_id: str) -> None:
    """Point ``base/latest`` at ``run_id`` atomically (a reader sees the old or the new link)."""
    tmp = os.path.join(base, f".{LATEST}-{run_id}")
    os.symlink(run_id, tmp)
    os.replace(tmp, os.path.join(base, LATEST))
