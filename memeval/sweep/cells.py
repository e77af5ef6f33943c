"""Planning a sweep: which cells run, in which order, and which profiles are skipped."""

from __future__ import annotations

import os
from dataclasses import dataclass
from collections.abc import Mapping

from memeval.spec.matrix import Matrix, Profile


@dataclass(frozen=True)
class Cell:
    """One (profile, repeat) run; ``folder`` holds its run.json, run.md, run.log and server.log."""

    profile: Profile
    repeat: int
    folder: str

    @property
    def label(self) -> str:
        """``<profile>-r<repeat>``, the run's label and folder name."""
        return f"{self.profile.name}-r{self.repeat}"


def plan_cells(matrix: Matrix, out: str, repeat: int, only: tuple[str, ...],
               environ: Mapping[str, str]) -> tuple[list[Cell], list[str]]:
    """The cells to run (repeat by repeat, profiles in matrix order) and one line per profile
    skipped because a ``requires`` variable is unset.

    Raises:
        UsageError: ``only`` names a profile the matrix lacks.
    """
    wanted = {matrix.profile(name).name for name in only}
    profiles = [p for p in matrix.profiles if not wanted or p.name in wanted]
    skipped = []
    runnable = []
    for profile in profiles:
        missing = matrix.missing(profile, environ)
        if missing:
            skipped.append(f"skipped {profile.name}: requires {', '.join(missing)}, which is unset")
        else:
            runnable.append(profile)
    cells = [Cell(p, r, os.path.join(out, f"{p.name}-r{r}")) for r in range(1, repeat + 1) for p in runnable]
    return cells, skipped
