"""One vocabulary: every ``enum`` in the shipped JSON Schemas is declared here against the
:mod:`memeval.vocab` tuple (or record enum) it must equal, value for value and in order; an enum
not declared, or one that differs, fails — and the check is shown to catch both."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from memeval import vocab as V
from memeval.record import TimingLabel
from memeval.spec.validate import available_schemas, schema

TIMING_LABELS = tuple(label.value for label in TimingLabel)

EXPECTED: dict[str, Sequence[object]] = {
    # "<schema>:<where>", where = the $defs entry (or "") and the property the enum belongs to
    "matrix:profile.targets": V.TARGETS,
    "scenario:document.source": V.DOCUMENT_SOURCES,
    "scenario:learning.kind": V.LEARNING_KINDS,
    "scenario:probe.route": V.ROUTES,
    "scenario:probe.dropped_roles": V.DROPPED_ROLES,
    "scenario:probe.style": V.STYLES,
    "scenario:probe.groups": V.PROBE_GROUPS,
    "scenario:probe.phases": V.PHASES,
    "suite:.cluster": V.CLUSTER_UNITS,
    "suite:match": V.MATCHES,
    "suite:agent.reply": V.REPLIES,
    "suite:agent.probe_questions": V.PROBE_QUESTION_MODES,
    "run:.timings": TIMING_LABELS,
    "run:.timing_scenarios": TIMING_LABELS,
    "run:.totals": V.PHASES,
    "run:.latency": TIMING_LABELS,
    "run:scenario_result.status": V.SCENARIO_STATUSES,
    "run:probe_result.phase": V.PHASES,
    "run:probe_result.route": V.ROUTES,
    "run:probe_result.style": V.STYLES,
    "run:probe_result.groups": V.PROBE_GROUPS,
    "run:probe_result.match": V.MATCHES,
    "run:probe_result.status": V.PROBE_STATUSES,
    "run:phase_totals.styles": V.STYLES,
    "run:kpi.group": V.KPI_GROUPS,
    "run:kpi.unit": V.UNITS,
    "run:kpi.better": V.DIRECTIONS,
}
"""Every enum of every shipped schema, by where it sits, and the vocabulary it spells."""

_WRAPPERS = {"items", "propertyNames", "additionalProperties", "anyOf", "oneOf", "then", "else", "if"}


def enums(node: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, list[object]]]:
    """(where, values) for each ``enum`` under ``node``: where is ``owner.property`` (owner: the
    ``$defs`` entry, empty at the top level; a ``$defs`` entry that is itself an enum is its
    name alone); ``null`` is left out of the values (a nullable field, not a word)."""
    if isinstance(node, list):
        for item in node:
            yield from enums(item, path)
        return
    if not isinstance(node, dict):
        return
    if "enum" in node:
        yield _where(path), [v for v in node["enum"] if v is not None]
    for key, child in node.items():
        if key != "enum":
            yield from enums(child, (*path, key))


def _where(path: tuple[str, ...]) -> str:
    owner = path[1] if path[:1] == ("$defs",) and len(path) > 1 else ""
    names = [path[i + 1] for i, p in enumerate(path[:-1]) if p == "properties" and path[i - 1:i] != ("properties",)]
    if not names:
        return owner
    return f"{owner}.{names[-1]}"


def mismatches(name: str, document: dict[str, Any]) -> list[str]:
    """Each enum of schema ``name`` that is not declared in :data:`EXPECTED` or differs from it."""
    out = []
    for where, values in enums(document):
        key = f"{name}:{where}"
        if key not in EXPECTED:
            out.append(f"{key}: an enum not declared against a vocabulary ({values})")
        elif tuple(values) != tuple(EXPECTED[key]):
            out.append(f"{key}: {values} differs from the vocabulary {list(EXPECTED[key])}")
    return out


def test_every_schema_enum_is_its_vocabulary() -> None:
    problems = [m for name in available_schemas() for m in mismatches(name, schema(name))]
    assert problems == []


def test_every_declared_enum_is_in_a_schema() -> None:
    found = {f"{name}:{where}" for name in available_schemas() for where, _ in enums(schema(name))}
    assert set(EXPECTED) - found == set()


@pytest.mark.parametrize("change, words", [
    (lambda s: s["$defs"]["probe"]["properties"]["route"]["enum"].append("recap"), "scenario:probe.route: ['ask'"),
    (lambda s: s["$defs"]["probe"]["properties"]["style"]["enum"].remove("paraphrase"), "differs from the vocabulary"),
    (lambda s: s["$defs"]["probe"]["properties"]["phases"]["items"]["enum"].reverse(), "scenario:probe.phases"),
    (lambda s: s["$defs"]["probe"]["properties"].update(mood={"enum": ["calm"]}), "scenario:probe.mood: an enum not declared"),
])
def test_the_check_catches_a_schema_that_differs(change: Any, words: str) -> None:
    changed = copy.deepcopy(schema("scenario"))
    change(changed)
    found = mismatches("scenario", changed)
    assert len(found) == 1 and words in found[0]


def test_nested_vocabularies_keep_their_order() -> None:
    assert V.KPI_GROUPS == ("accuracy", *V.PROBE_GROUPS, "cost", "latency")
    assert V.TARGETS == ("all", *V.KPI_GROUPS)
    tuples = [getattr(V, n) for n in V.__all__ if isinstance(getattr(V, n), tuple)]
    assert len(tuples) == 17 and all(t and len(set(t)) == len(t) for t in tuples)


def test_the_cluster_units_scoring_knows_are_the_vocabulary() -> None:
    from memeval.score.clusters import UNITS

    assert UNITS == V.CLUSTER_UNITS
