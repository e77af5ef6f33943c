"""Open a benchmark file: verify it whole (format, sha256, variant), then select and stream it.

:func:`scan` is the first pass: it parses every element into typed values (so a broken file is
refused before anything is written or any engine is called), hashes the bytes, and keeps only
ids and earliest dates, never the elements. :func:`iter_units` is the second pass, yielding one
typed unit at a time. Both passes are bounded by the largest element, not by the file.
"""

from __future__ import annotations

import random
from collections.abc import Generator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from memeval.datasets import locomo, longmemeval
from memeval.datasets.model import LmeInstance, LocomoSample
from memeval.datasets.stream import ArrayStream
from memeval.errors import UsageError
from memeval.vocab import DATASET_FORMATS as FORMATS


@dataclass(frozen=True)
class Unit:
    """What the first pass keeps of one element: its id (question id for LongMemEval, sample id
    for LoCoMo), the question ids it holds, and its earliest session date."""

    id: str
    question_ids: tuple[str, ...]
    earliest: datetime


@dataclass(frozen=True)
class DatasetFile:
    """A verified benchmark file: its format, variant, sha256 and what it holds."""

    format: str
    path: Path
    variant: str
    sha256: str
    units: tuple[Unit, ...]

    @property
    def questions(self) -> int:
        """How many questions the file holds."""
        return sum(len(u.question_ids) for u in self.units)


@dataclass(frozen=True)
class Selection:
    """Which questions to take: ``only`` (question ids, or LoCoMo sample ids meaning all their
    questions), then a seeded random ``sample`` of that many, then the first ``limit`` in file
    order. Empty means everything."""

    only: tuple[str, ...] = ()
    limit: int | None = None
    sample: int | None = None
    seed: int = 0


def parse_unit(fmt: str, path: Path, index: int, raw: Any) -> LmeInstance | LocomoSample:
    """One element of a file in ``fmt`` as its typed value."""
    if fmt == "longmemeval":
        return longmemeval.parse_instance(path, index, raw)
    return locomo.parse_sample(path, index, raw)


def scan(fmt: str, path: str | Path, sha256: str | None = None, variant: str | None = None) -> DatasetFile:
    """Read the whole file once and verify it. Raises :class:`UsageError` (exit 2), naming the
    file and the field, for a wrong format, a truncated or malformed file, duplicate ids, a
    sha256 other than ``sha256``, or a variant other than ``variant``."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown dataset format {fmt!r}; expected one of {', '.join(FORMATS)}")
    path = Path(path)
    stream = ArrayStream(path)
    units: list[Unit] = []
    found_variant: str | None = None
    for index, raw in enumerate(stream, 1):
        item = parse_unit(fmt, path, index, raw)
        if found_variant is None:
            found_variant = _variant(fmt, path, item, variant)
        units.append(_unit(item))
    if not units:
        raise UsageError(f"{path}: the file holds no instances")
    assert stream.sha256 is not None and found_variant is not None
    if sha256 is not None and stream.sha256 != sha256.lower():
        raise UsageError(f"{path}: field 'sha256': the file's sha256 is {stream.sha256}, expected {sha256.lower()}")
    _check_unique(path, units)
    return DatasetFile(fmt, path, found_variant, stream.sha256, tuple(units))


def _variant(fmt: str, path: Path, item: LmeInstance | LocomoSample, wanted: str | None) -> str:
    if isinstance(item, LmeInstance):
        return longmemeval.check_variant(path, item, wanted)
    if wanted is not None and wanted not in locomo.VARIANTS:
        raise UsageError(f"{path}: field 'variant': {wanted!r} is not a LoCoMo variant ({', '.join(locomo.VARIANTS)})")
    return wanted or locomo.VARIANTS[0]


def _unit(item: LmeInstance | LocomoSample) -> Unit:
    if isinstance(item, LmeInstance):
        dates = [s.date for s in item.sessions] or [item.asked_at]
        return Unit(item.question_id, (item.question_id,), min(dates))
    return Unit(item.sample_id, tuple(q.id for q in item.questions), min(s.date for s in item.sessions))


def _check_unique(path: Path, units: list[Unit]) -> None:
    seen: set[str] = set()
    for unit in units:
        for qid in {unit.id, *unit.question_ids}:
            if qid in seen:
                raise UsageError(f"{path}: field 'question_id': {qid!r} occurs more than once")
            seen.add(qid)


def select(dataset: DatasetFile, selection: Selection) -> tuple[str, ...]:
    """The selected question ids in file order. Raises :class:`UsageError` for ids in ``only``
    that the file does not hold, or a sample larger than what is left to sample from."""
    order = [q for u in dataset.units for q in u.question_ids]
    chosen = order
    if selection.only:
        by_unit = {u.id: u.question_ids for u in dataset.units}
        known = set(order)
        unknown = [i for i in selection.only if i not in known and i not in by_unit]
        if unknown:
            raise UsageError(f"{dataset.path}: --only names ids the file does not hold: {', '.join(unknown[:10])}")
        wanted = {q for i in selection.only for q in by_unit.get(i, (i,))}
        chosen = [q for q in order if q in wanted]
    if selection.sample is not None:
        if selection.sample > len(chosen):
            raise UsageError(f"--sample {selection.sample}: only {len(chosen)} questions to sample from")
        picked = set(random.Random(selection.seed).sample(chosen, selection.sample))
        chosen = [q for q in chosen if q in picked]
    if selection.limit is not None:
        chosen = chosen[:selection.limit]
    return tuple(chosen)


def iter_units(dataset: DatasetFile) -> Generator[LmeInstance | LocomoSample, None, None]:
    """The file's typed units, one at a time (a second pass). Raises :class:`UsageError` at the
    end if the bytes read differ from those :func:`scan` verified (the file changed between); a
    caller that stops early (closing the iterator) skips that check."""
    stream = ArrayStream(dataset.path)
    for index, raw in enumerate(stream, 1):
        yield parse_unit(dataset.format, dataset.path, index, raw)
    if stream.sha256 != dataset.sha256:
        raise UsageError(f"{dataset.path}: the file changed while it was read (sha256 {stream.sha256}, "
                         f"verified {dataset.sha256})")
