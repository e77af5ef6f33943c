"""Where the libraries an engine uses log during a run: ``library.log`` in the run folder.

mem0, Graphiti and the packages under them log through Python's ``logging`` with no handler of
their own (Python then prints WARNING and above to stderr) and warn through ``warnings``; a run
of Graphiti printed hundreds of such lines, even with ``--quiet``. For the run, the root logger
writes them to the file, secrets masked, and warnings are captured into it. memeval's own
warnings (an engine request retried) still reach stderr, except under ``--quiet``, where they
go to the file too. Everything is restored when the run ends.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator

from memeval.errors import UsageError
from memeval.secrets import mask

FILE = "library.log"


class _Masked(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return mask(super().format(record))


def _ours(record: logging.LogRecord) -> bool:
    return record.name == "memeval" or record.name.startswith("memeval.")


def _on_terminal(handler: logging.Handler) -> bool:
    stream = getattr(handler, "stream", None)
    return stream is not None and stream in (sys.stderr, sys.stdout, sys.__stderr__, sys.__stdout__)


@contextlib.contextmanager
def library_log(folder: str, quiet: bool = False) -> Iterator[str]:
    """Route third-party logging and warnings (with ``quiet``, memeval's own too) to
    ``folder/library.log`` while the block runs; yields the file's path.

    Raises:
        UsageError: the file cannot be opened, or is a symbolic link (never followed).
    """
    path = os.path.join(folder, FILE)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o666)
    except OSError as err:
        raise UsageError(f"{path}: cannot be the library log ({err.strerror}; a symbolic link is refused)") from None
    to_file = logging.StreamHandler(os.fdopen(fd, "a", encoding="utf-8"))
    to_file.setFormatter(_Masked("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handlers: list[logging.Handler] = [to_file]
    if not quiet:
        to_file.addFilter(lambda record: not _ours(record))
        ours = logging.StreamHandler(sys.stderr)  # what Python's last-resort handler showed of memeval's own
        ours.setLevel(logging.WARNING)
        ours.setFormatter(_Masked("%(message)s"))
        ours.addFilter(_ours)
        handlers.append(ours)
    root = logging.getLogger()
    saved = root.handlers[:]
    # a handler some import put on the terminal is set aside; others (a capture, a file) stay
    root.handlers = [h for h in saved if not _on_terminal(h)] + handlers
    logging.captureWarnings(True)
    try:
        yield path
    finally:
        logging.captureWarnings(False)
        root.handlers = saved
        to_file.close()
