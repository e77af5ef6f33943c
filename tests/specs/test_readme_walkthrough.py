"""The worked example of docs/language.md ("Adding a scenario is editing YAML", linked from the
README) exists, says exactly what the page shows, and passes every one of its probes on the reference engine: a walkthrough a new
user copies must work as written."""

from __future__ import annotations

import os
import re

import pytest

from memeval import api
from tests.conftest import ROOT

README = os.path.join(ROOT, "README.md")
LANGUAGE = os.path.join(ROOT, "docs", "language.md")
SUITE = os.path.join(ROOT, "specs", "agent-memory.yaml")
NAMED = re.compile(r"A worked example, `(specs/scenarios/[\w.]+\.yaml)`:\s*```yaml\n(.*?)```", re.S)


def _example() -> tuple[str, str]:
    """(path, YAML block) of the worked example as docs/language.md gives it."""
    with open(LANGUAGE, encoding="utf-8") as fh:
        found = NAMED.search(fh.read())
    assert found, "docs/language.md has no worked example introduced by 'A worked example, `specs/scenarios/….yaml`:'"
    return found.group(1), found.group(2)


def test_the_file_the_readme_names_is_the_block_it_shows() -> None:
    path, block = _example()
    full = os.path.join(ROOT, path)
    assert os.path.isfile(full), f"docs/language.md names {path}, which does not exist"
    with open(full, encoding="utf-8") as fh:
        assert fh.read() == block


@pytest.mark.slow
def test_every_probe_of_the_example_passes_on_the_reference_engine() -> None:
    path, block = _example()
    scenario = re.search(r"^scenario: (\S+)$", block, re.M)
    assert scenario
    record = api.run(SUITE, "reference", only=[scenario.group(1)])
    probes = [p for p in record.probes if p.scenario == scenario.group(1)]
    assert probes and all(p.status == "scored" for p in probes)
    failures = []
    for p in probes:
        if p.abstain:
            if p.invented is not False:
                failures.append(f"{p.id} ({p.phase}): the pack holds a forbidden string {p.leaked}")
            continue
        if not p.hit:
            failures.append(f"{p.id} ({p.phase}): the pack misses {p.expect}")
        if p.stale and not p.fresh_first:
            failures.append(f"{p.id} ({p.phase}): the stale value came first")
        if p.leak_checked and p.leak:
            failures.append(f"{p.id} ({p.phase}): leaked {p.leaked}")
    assert not failures, "\n".join(failures)


KNOWN_ENGINES = {"CortexDB": "cortex", "mem0": "mem0", "Graphiti": "graphiti", "RAG baseline": "rag-baseline",
                 "Zep": "zep", "Letta": "letta"}


def test_the_intro_names_as_shipped_only_engines_that_have_an_adapter() -> None:
    """The README's opening paragraph claims adapters only for engines registered under the
    ``memeval.engines`` entry point; others may be named only as ones that plug in."""
    from importlib.metadata import entry_points

    with open(README, encoding="utf-8") as fh:
        intro = fh.read().split("\n\n")[1]
    shipped, _, rest = intro.partition("plugs in")
    assert rest, "the intro says how other engines plug in"
    registered = {e.name for e in entry_points(group="memeval.engines")}
    claimed = {adapter for name, adapter in KNOWN_ENGINES.items() if name in shipped.split("(")[0]}
    assert claimed and claimed <= registered, f"the intro claims adapters for {sorted(claimed - registered)}"
