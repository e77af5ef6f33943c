"""What run.json records of a suite's errata file: the disputed gold answers, and how the run
scored on them apart from the headline rates."""

from __future__ import annotations

from dataclasses import dataclass

from memeval.record.codec import Fraction


@dataclass(frozen=True)
class Disputed:
    """One probe whose gold is disputed, and the erratum that says so."""

    scenario: str
    """The probe's scenario."""
    probe: str
    """The probe id."""
    id: str
    """The erratum's id as the errata file writes it (a question id, or SCENARIO/PROBE)."""
    source: str
    """Where the dispute is documented (a URL or a citation)."""
    reason: str
    """Why the gold is disputed."""


@dataclass(frozen=True)
class ErrataResult:
    """One headline rate with the disputed probes set apart."""

    kpi: str
    """The KPI (pack hit, extractive answer, model answer)."""
    n: int
    """Probes it counts, disputed ones included."""
    disputed: int
    """Of those, probes whose gold is disputed (left out of the headline rate)."""
    clean_k: int
    """Correct probes among the n − disputed the headline rate counts."""
    disputed_k: int
    """Correct probes among the disputed ones."""
    ceiling: Fraction | None
    """(n − disputed) / n: the best accuracy attainable if every disputed gold is unattainable (None: n = 0)."""


@dataclass(frozen=True)
class ErrataRecord:
    """The suite's errata file, as applied to the run."""

    file: str
    """The errata file's name."""
    sha256: str
    """sha256 of the file's bytes."""
    covers: str
    """What the file says it covers (a dataset and variant, or a suite)."""
    count: int
    """Entries in the file."""
    disputed: tuple[Disputed, ...]
    """The run's probes whose gold is disputed."""
    unselected: int
    """Entries naming a dataset question this run does not select."""
    unknown: tuple[str, ...]
    """Entry ids naming no question of the suite or its dataset (not applied)."""
    results: tuple[ErrataResult, ...] = ()
    """The headline rates with the disputed probes set apart (derived)."""
