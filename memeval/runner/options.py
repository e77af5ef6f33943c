"""Run options as a frozen value, and the checks on them that need the suite."""

from __future__ import annotations

import re
from dataclasses import dataclass

from memeval.errors import UsageError
from memeval.spec.model import Suite
from memeval.util.suggest import did_you_mean

_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def check_label(label: str) -> str:
    """Return ``label`` if it is a safe folder name (letters, digits, '.', '_', '-'; no '..')."""
    if not _LABEL.fullmatch(label) or ".." in label:  # fullmatch: "$" would let a trailing newline through
        raise UsageError(f"--label {label!r}: use letters, digits, '.', '_' and '-' only (it names a folder under runs/)")
    return label


@dataclass(frozen=True)
class RunOptions:
    """What the command line asked for. Times in seconds; None means "the default"."""

    engine: str = "reference"
    only: tuple[str, ...] = ()
    label: str = ""
    keep: bool = False
    enrich_wait_s: float | None = None
    enrich_poll_s: float = 3.0
    settle_timeout_s: float | None = None
    llm: bool = False
    jobs: int = 1


def check_only(suite: Suite, only: tuple[str, ...]) -> None:
    """Raise UsageError naming any ``--only`` scenario the suite does not have."""
    known = list(suite.scenario_ids)
    for name in only:
        if name not in known:
            raise UsageError(f"--only: no scenario {name!r} in suite {suite.name}{did_you_mean(name, known)}; "
                             f"scenarios: {', '.join(known)}")


def resolve_options(suite: Suite, engine: str, engine_wait_s: float | None, *, only: tuple[str, ...] = (),
                    label: str = "", keep: bool = False, enrich_wait_s: float | None = None,
                    settle_timeout_s: float | None = None, llm: bool = False, jobs: int = 1) -> RunOptions:
    """The options of a run of ``suite`` on the engine named ``engine``: the enrichment wait
    given, else the suite's default, else the engine definition's (``engine_wait_s``); the
    label given, else the engine's name (checked: it names a folder)."""
    waits = (enrich_wait_s, suite.defaults.enrich_wait_s, engine_wait_s)
    return RunOptions(engine=engine, only=only, label=check_label(label or engine), keep=keep,
                      enrich_wait_s=next((w for w in waits if w is not None), None),
                      settle_timeout_s=settle_timeout_s, llm=llm, jobs=jobs)
