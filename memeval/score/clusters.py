"""What a cluster is for a run's cluster bootstrap intervals and clustered paired tests.

A suite declares it with ``cluster:`` (suite schema). ``scenario`` groups a probe with the
others of its scenario; ``conversation`` and ``haystack`` group the same way under the name a
benchmark gives its unit (an imported or streamed LoCoMo conversation is one scenario, and so is
a LongMemEval question with its own haystack); ``category``, ``route`` and ``style`` group by
that probe field (a probe without a category is its own cluster, ``(none)``), and ``probe``
makes every probe its own cluster (the intervals then treat probes as independent, as Wilson
does). Undeclared, the unit is the benchmark's own
(:attr:`~memeval.benchmarks.base.Benchmark.cluster_unit`: ``conversation`` for LoCoMo,
``haystack`` for LongMemEval) for a benchmark suite (its ``dataset:`` or the ``x-dataset`` note
``memeval import`` writes) and ``scenario`` for any other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from memeval.plugins import BENCHMARKS, find
from memeval.record import ProbeResult

@runtime_checkable
class _Clustered(Protocol):
    """What clustering asks of a benchmark (:class:`memeval.benchmarks.base.Benchmark`)."""

    @property
    def cluster_unit(self) -> str:
        """Its suites' default unit."""


BY_SCENARIO = ("scenario", "conversation", "haystack")
"""Units that group probes by their scenario (named as the benchmark names it)."""
BY_FIELD: dict[str, Callable[[ProbeResult], str]] = {
    "category": lambda p: p.category or "(none)",
    "route": lambda p: p.route,
    "style": lambda p: p.style,
    "probe": lambda p: f"{p.scenario}/{p.id}",
}
UNITS = (*BY_SCENARIO, *BY_FIELD)
"""Every unit a suite's ``cluster:`` may name."""


@dataclass(frozen=True)
class Clustering:
    """The cluster unit of a run (one of :data:`UNITS`)."""

    unit: str = "scenario"

    def of(self, probe: ProbeResult) -> str:
        """The cluster ``probe`` belongs to."""
        return probe.scenario if self.unit in BY_SCENARIO else BY_FIELD[self.unit](probe)

    def labels(self, probes: Sequence[ProbeResult]) -> dict[tuple[str, str, str], str]:
        """Each probe's cluster by its key (scenario, probe id, phase)."""
        return {p.key: self.of(p) for p in probes}


SCENARIO = Clustering()


def clustering(resolved: Mapping[str, Any]) -> Clustering:
    """The unit the resolved suite ``resolved`` declares, else its default (module docstring).
    An unknown name (a record from a later memeval) falls back to ``scenario``."""
    declared = resolved.get("cluster")
    if isinstance(declared, str):
        return Clustering(declared if declared in UNITS else "scenario")
    for source in (resolved.get("dataset"), resolved.get("x-dataset")):
        bench = find(BENCHMARKS, str(source.get("format"))) if isinstance(source, Mapping) else None
        if isinstance(bench, _Clustered):
            return Clustering(bench.cluster_unit if bench.cluster_unit in UNITS else "scenario")
    return SCENARIO
