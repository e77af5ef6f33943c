"""A dataset-sourced suite's units as scenarios, built in memory one at a time.

Each unit (a question with its own haystack, a conversation) goes through the very mapping
``memeval import`` writes as YAML (:func:`~memeval.benchmarks.importer.unit_document`, the
benchmark's own) and the
loader's own checks and builder, so both routes give the same plan; only the unit being run is
held in memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from memeval.errors import SpecError
from memeval.spec.checks import Located, check_scenario
from memeval.spec.load import build_scenario
from memeval.spec.model import DatasetSource, Scenario, Suite
from memeval.spec.yamlload import Marks


def suite_scenarios(suite: Suite, only: tuple[str, ...] = ()) -> Iterator[Scenario]:
    """The suite's inline and included scenarios, then its dataset's units streamed from the
    file; restricted to ``only`` when given (a unit left out is skipped without being built)."""
    yield from (s for s in suite.scenarios if not only or s.id in only)
    if suite.dataset is not None:
        yield from dataset_scenarios(suite.dataset, _epoch(suite.defaults.epoch), suite.match, only)


def dataset_scenarios(source: DatasetSource, epoch: datetime, match: str,
                      only: tuple[str, ...] = ()) -> Iterator[Scenario]:
    """Each selected unit of ``source`` as a scenario, in file order. A unit none of whose
    selected questions maps to a probe is skipped (as the import skips it).

    Raises:
        UsageError: the file changed since it was verified at load.
        SpecError: a unit whose mapping fails the loader's checks (a mapping bug, never data).
    """
    from memeval.benchmarks.importer import unit_document  # the readers load only for a suite with a dataset
    from memeval.benchmarks.source import DatasetFile, iter_units
    from memeval.datasets.yamlout import ImportResult

    chosen, wanted = set(source.questions), set(source.units)
    dataset = DatasetFile(source.format, Path(source.path), source.variant, source.sha256, ())
    for unit in iter_units(dataset):
        document = unit_document(dataset, unit, chosen, epoch, ImportResult(Path(source.path)))
        if document is None or document["scenario"] not in wanted or (only and document["scenario"] not in only):
            continue
        located = Located(document, source.path, Marks(), ())
        issues = check_scenario(located)
        if issues:
            raise SpecError(issues)
        yield _placed(build_scenario(located, match), source)


def _placed(scenario: Scenario, source: DatasetSource) -> Scenario:
    """The scenario and its probes located at the suite's ``dataset:`` key (where they were declared)."""
    probes = tuple(replace(p, origin=source.origin) for p in scenario.probes)
    return replace(scenario, origin=source.origin, probes=probes)


def _epoch(text: str) -> datetime:
    """The suite epoch as the naive datetime the import mapping dates from."""
    return datetime.strptime(text.rstrip("Z")[:16], "%Y-%m-%dT%H:%M")
