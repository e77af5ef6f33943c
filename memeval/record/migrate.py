"""Reading run.json files of older formats: one function per format step, applied in turn to the
file's JSON before it is decoded, so every later stage sees only the current record.

A step upgrades what the older format wrote to what the next one means. Format 2 gives ``None``
one meaning, "not measured": where format 1 left a key out either because there was nothing to
measure or because the writer predates the field, the step fills the value where the rest of
the file determines it, and otherwise lists the field in the record's :class:`Migrated` note, so
a reader can tell "the source never recorded this" from "nothing was measured".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from memeval.record.codec import Json, JsonObject, RecordError


@dataclass(frozen=True)
class Migrated:
    """How a record written in an older run.json format was upgraded when it was read."""

    source: int = field(metadata={"key": "from"})
    """The ``format_version`` of the file as it was written."""
    absent: tuple[str, ...]
    """Fields the file recorded nowhere (its writer predates them, or had nothing to measure), by path (``probes[].haystack_tokens``): their None is "not recorded"."""
    derived: tuple[str, ...]
    """Fields filled on reading from the rest of the file (``setup.grading.cluster`` from the KPIs' cluster intervals)."""

    def measured(self, *roots: str) -> Migrated:
        """The note once the fields under ``roots`` (``setup``, ``kpis``, …) were computed again
        for this record: they are no longer absent."""
        def under(path: str) -> bool:
            return any(path == r or path.startswith((f"{r}.", f"{r}[]")) for r in roots)
        return replace(self, absent=tuple(p for p in self.absent if not under(p)))


Step = Callable[[JsonObject], JsonObject]
"""One format step: the JSON of a record of version N as the JSON of version N + 1."""

# Fields format 1 described as "None: …, or an older record", by path: "[]" walks a list's items.
_V1_OPTIONAL = ("setup", "stuffing", "engine_unsupported", "stuffing.tokens_retrieved", "stuffing.tokens_stored",
                "stuffing.items_retrieved", "stuffing.items_stored", "probes[].haystack_tokens",
                "probes[].haystack_items", "kpis[].clustered", "setup.grading.cluster", "answerer.cache.reused", "answerer.judge.cache.reused",
                "answerer.judge.agreement.kappa", "benchmark.judge.cache.reused")


def v1_to_v2(data: JsonObject) -> JsonObject:
    """A format 1 record as format 2: ``format_version`` 2, the fields format 1 may have left out
    filled where the rest of the file determines them, and a ``migrated`` note naming the others.

    Derived: ``setup.grading.cluster`` (the unit of the KPIs' cluster intervals). Set without a
    note, as format 1 had no choice: ``options.jobs`` 1 (it ran scenarios one at a time). Not listed as
    absent, since the file shows nothing was left out: ``setup.dataset``'s ``category_map`` and
    ``abstention`` (format 1 wrote ``setup.dataset`` only once it wrote both wherever they
    applied; before, it was always null), ``stuffing`` when
    the probes carry their haystacks (a writer that recorded them wrote the check whenever there
    was something to check) and ``stuffing.items_retrieved`` when the stuffing check has
    ``tokens_stored`` (it was written with it, and left out only when no pack counted its items).
    """
    out = _copy(data)
    derived = _derive_v1(out)
    known = set(derived)
    if _everywhere(out, "probes[].haystack_tokens"):
        known.add("stuffing")
    if _everywhere(out, "stuffing.tokens_stored"):
        known.add("stuffing.items_retrieved")
    absent = [path for path in _V1_OPTIONAL if path not in known and _left_out(out, path)]
    out["format_version"] = 2
    out["migrated"] = {"from": 1, "absent": absent, "derived": derived}
    return out


def _derive_v1(data: JsonObject) -> list[str]:
    """Fill what a format 1 file determines but left out; the paths filled."""
    filled = []
    options = _object(data.get("options"))
    if options and "jobs" not in options:  # format 1 had no --jobs: every run ran one scenario at a time
        options["jobs"] = 1
    grading = _object(_object(data.get("setup")).get("grading"))
    units = {str(c["unit"]) for c in (_object(k.get("clustered")) for k in _objects(data.get("kpis"))) if "unit" in c}
    if grading and "cluster" not in grading and len(units) == 1:
        grading["cluster"] = units.pop()
        filled.append("setup.grading.cluster")
    return filled


STEPS: dict[int, Step] = {1: v1_to_v2}
"""The step from each older format to the next."""


def upgrade(data: JsonObject, current: int, source: str) -> JsonObject:
    """``data`` (a run record's JSON with a ``format_version``) as format ``current``.

    Raises:
        RecordError: a version that is not a whole number, newer than ``current``, or older than
            any step reaches (one line, naming ``source``).
    """
    version = data["format_version"]
    oldest = min(STEPS, default=current)
    if isinstance(version, bool) or not isinstance(version, int) or not oldest <= version <= current:
        newer = " (written by a newer memeval)" if isinstance(version, int) and version > current else ""
        raise RecordError(f"{source}: format_version {version!r}{newer}; this memeval reads run.json formats "
                          f"{oldest} to {current}")
    while version < current:
        data = STEPS[version](data)
        version = int(str(data["format_version"]))
    return data


def _copy(value: JsonObject) -> JsonObject:
    """A deep copy (a step fills nested objects of its copy; the caller's stay as given)."""
    return {k: _copy_json(v) for k, v in value.items()}


def _copy_json(value: Json) -> Json:
    if isinstance(value, dict):
        return {k: _copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_json(v) for v in value]
    return value


def _left_out(data: JsonObject, path: str) -> bool:
    """Whether some object the path leads to exists and none holds its last key."""
    *parents, key = path.split(".")
    holders = list(_reach(data, parents))
    return bool(holders) and all(key.removesuffix("[]") not in h for h in holders)


def _everywhere(data: JsonObject, path: str) -> bool:
    """Whether every object the path leads to holds its last key (and there is one)."""
    *parents, key = path.split(".")
    holders = list(_reach(data, parents))
    return bool(holders) and all(key in h for h in holders)


def _reach(node: JsonObject, parts: list[str]) -> Iterator[JsonObject]:
    """The objects at ``parts`` below ``node`` (``name[]``: each item of the list ``name``)."""
    if not parts:
        yield node
        return
    head, rest = parts[0], parts[1:]
    value = node.get(head.removesuffix("[]"))
    children = _objects(value) if head.endswith("[]") else [value] if isinstance(value, dict) else []
    for child in children:
        yield from _reach(child, rest)


def _object(value: Json | None) -> JsonObject:
    """``value`` when it is an object (the same object, so it can be filled), else an empty one."""
    return value if isinstance(value, dict) else {}


def _objects(value: Json | None) -> list[JsonObject]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
