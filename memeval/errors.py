"""Every error memeval raises, and the one place where errors become exit codes.

The tree::

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

from dataclasses import dataclass

EXIT_OK = 0
EXIT_GATE = 1
EXIT_USAGE = 2
EXIT_ENGINE = 3
EXIT_INTERRUPTED = 130


class MemevalError(Exception):
    """Base of every error memeval raises on purpose."""

    exit_code = EXIT_ENGINE


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

    exit_code = EXIT_USAGE

    def __init__(self, issues: list[SpecIssue]):
        self.issues = sorted(issues, key=lambda i: (i.file, i.line, i.column, i.path, i.message))
        super().__init__("\n".join(i.render() for i in self.issues))


class UsageError(MemevalError):
    """The command line asks for something that cannot work."""

    exit_code = EXIT_USAGE


class GateFailed(MemevalError):
    """A gate failed or a comparison found a regression."""

    exit_code = EXIT_GATE


class EngineError(MemevalError):
    """The engine or its server failed. ``str(err)`` is a one-line reason fit for a report."""

    exit_code = EXIT_ENGINE


class SettleTimeout(EngineError):
    """Writes did not all become visible before the settle timeout."""


class Unsupported(MemevalError):
    """The engine lacks a capability a step needs; the probe is reported as unsupported."""


class AnswererStopped(MemevalError):
    """The answering model refused for good (401/402/403); remaining probes stay unanswered."""


class Interrupted(MemevalError):
    """The user pressed Ctrl-C."""

    exit_code = EXIT_INTERRUPTED
