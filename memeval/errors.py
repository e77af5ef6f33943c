"""Every error memeval raises, and the one mapping from a command's outcome to its exit code.

A command ends in one :class:`Outcome`; :func:`exit_code` is the only place that turns it into
a number, and :func:`outcome_of` the only place that says which outcome an exception means.
Each error class names its outcome:

    MemevalError                 exit 3 unless a subclass says otherwise
    ├── SpecError                exit 2: a spec (YAML) is invalid; carries every SpecIssue at once
    ├── UsageError               exit 2: a command line that cannot work (unknown engine, bad path)
    ├── GateFailed               exit 1: a gate or a comparison found a regression
    ├── EngineError              exit 3: the engine or its server failed; ``reason`` is one line
    │   └── SettleTimeout        exit 3: writes did not become visible in time
    ├── Unsupported              never exits: a capability the engine lacks (reported per probe)
    └── AnswererStopped          never exits: the model endpoint refused (auth, spending limit)

``Interrupted`` (Ctrl-C) maps to 130.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Outcome(enum.Enum):
    """How a command ended; :func:`exit_code` gives its exit code."""

    OK = "ok"
    GATE = "a gate failed or a comparison found a regression"
    USAGE = "a bad spec or command line"
    ENGINE = "an engine or infrastructure failure"
    INTERRUPTED = "interrupted (Ctrl-C or SIGTERM)"


_EXIT_CODES = {Outcome.OK: 0, Outcome.GATE: 1, Outcome.USAGE: 2, Outcome.ENGINE: 3, Outcome.INTERRUPTED: 130}


def exit_code(outcome: Outcome) -> int:
    """The process exit code of ``outcome``: 0 ok, 1 gate or regression, 2 bad spec or usage,
    3 engine or infrastructure failure, 130 interrupted."""
    return _EXIT_CODES[outcome]


def outcome_of(err: MemevalError | KeyboardInterrupt) -> Outcome:
    """The outcome an exception ends a command with: a :class:`MemevalError` says its own,
    Ctrl-C is :attr:`Outcome.INTERRUPTED`."""
    return err.outcome if isinstance(err, MemevalError) else Outcome.INTERRUPTED


class MemevalError(Exception):
    """Base of every error memeval raises on purpose."""

    outcome = Outcome.ENGINE


@dataclass(frozen=True)
class SpecIssue:
    """One problem in a spec file, located as precisely as the loader can.

    ``line`` and ``column`` are 1-based; 0 means "the file as a whole".
    """

    file: str
    line: int
    column: int
    path: str
    message: str

    def render(self) -> str:
        """``file:line:col  json.path: message``, the format every spec error prints in."""
        where = f"{self.file}:{self.line}:{self.column}"
        return f"{where}  {self.path or '(root)'}: {self.message}"


class SpecError(MemevalError):
    """A spec is invalid. ``issues`` holds every problem found, sorted by place."""

    outcome = Outcome.USAGE

    def __init__(self, issues: list[SpecIssue]):
        self.issues = sorted(issues, key=lambda i: (i.file, i.line, i.column, i.path, i.message))
        super().__init__("\n".join(i.render() for i in self.issues))


class UsageError(MemevalError):
    """The command line asks for something that cannot work."""

    outcome = Outcome.USAGE


class GateFailed(MemevalError):
    """A gate failed or a comparison found a regression."""

    outcome = Outcome.GATE


class EngineError(MemevalError):
    """The engine or its server failed. ``str(err)`` is a one-line reason fit for a report."""

    outcome = Outcome.ENGINE


class SettleTimeout(EngineError):
    """Writes did not all become visible before the settle timeout."""


class Unsupported(MemevalError):
    """The engine lacks a capability a step needs; the probe is reported as unsupported."""


class AnswererStopped(MemevalError):
    """The answering model refused for good (401/402/403); remaining probes stay unanswered."""


class Interrupted(MemevalError):
    """The user pressed Ctrl-C."""

    outcome = Outcome.INTERRUPTED
