"""The context-stuffing check: packs measured against the haystack written to their tenant."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from memeval.report.files import read_run
from memeval.report.render import render
from memeval.score.derive import derive
from memeval.score.haystack import haystacks
from memeval.spec.load import load_suite
from tests.conftest import FIXTURES

SPEC = {"scenarios": [{"scenario": "s", "agents": [{"id": "a", "tenant": "t"}, {"id": "b", "tenant": "u"}],
                       "documents": [{"id": "d", "tenant": "t", "text": "x" * 400}],
                       "learnings": [{"id": "l", "tenant": "u", "text": "y" * 4000}],
                       "threads": [{"id": "th", "agent": "a", "exchanges": [{"user": "z" * 40, "reply": "w" * 40,
                                                                            "tools": [{"result": "v" * 20}]}]}],
                       "probes": [{"id": "p", "agent": "a"}, {"id": "q", "agent": "b"}]}]}


def test_a_probe_haystack_is_what_was_written_to_its_agents_tenant():
    assert haystacks(SPEC) == {("s", "p"): 125, ("s", "q"): 1000}


def test_the_mini_suite_is_flagged_and_a_higher_threshold_clears_it():
    record = read_run(f"{FIXTURES}/records/mini-reference.json")
    assert record.stuffing is not None and record.stuffing.flagged and record.stuffing.threshold == 0.5
    assert "Not a retrieval test: the packs held on average 68%" in render(record, "run.md.j2")
    lenient = derive(replace(record, suite=replace(record.suite, resolved={**record.suite.resolved,
                                                                           "stuffing_threshold": 0.9})))
    assert lenient.stuffing is not None and not lenient.stuffing.flagged and lenient.stuffing.mean_share == 0.6776
    assert "Not a retrieval test" not in render(lenient, "run.md.j2")


def test_a_suite_may_set_its_threshold(tmp_path: Path):
    text = Path(f"{FIXTURES}/mini.yaml").read_text()
    (tmp_path / "mini.yaml").write_text(text.replace("suite: mini", "suite: mini\nstuffing_threshold: 0.8", 1))
    assert load_suite(str(tmp_path / "mini.yaml")).resolved["stuffing_threshold"] == 0.8


def test_the_depth_is_recorded_as_retrieved_against_stored():
    record = derive(read_run(f"{FIXTURES}/records/mini-reference.json"))
    s, depth = record.stuffing, record.setup.retrieval if record.setup else None
    assert s is not None and depth is not None
    scored = [p for p in record.probes if p.scored and p.tokens is not None]
    assert s.tokens_retrieved == round(sum(p.tokens or 0 for p in scored) / len(scored), 1)
    assert s.items_stored is not None and s.items_stored > 0 and s.items_retrieved is not None
    assert (depth.budget_tokens, depth.pack_items) == (1200, 23) and depth.budget_share == 1.0
    assert "Retrieval depth: a full pack (1200 tokens, 23 items) can hold 100% of the mean haystack" in \
        render(record, "run.md.j2")


def test_each_probe_records_its_haystack_as_the_spec_counts_it(tmp_path: Path):
    from tests.conftest import cli

    assert cli(["run", f"{FIXTURES}/mini.yaml", "--out", str(tmp_path / "run"), "--quiet"]) == 0
    record = read_run(str(tmp_path / "run" / "run.json"))
    assert {(p.scenario, p.id): p.haystack_tokens for p in record.probes} == haystacks(record.suite.resolved)


def test_a_streamed_dataset_is_measured_against_its_haystacks(tmp_path: Path):
    from tests.conftest import cli
    from tests.datasets.files import locomo_records, write

    write(tmp_path / "locomo10.json", locomo_records())
    (tmp_path / "bench.yaml").write_text("suite: lc\nabout: x\ndataset:\n  format: locomo\n  path: locomo10.json\n")
    assert cli(["run", str(tmp_path / "bench.yaml"), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    record = read_run(str(tmp_path / "run" / "run.json"))
    assert record.suite.resolved["scenarios"] == []  # its units are not in the resolved spec, yet:
    assert record.stuffing is not None and record.stuffing.probes > 0
    assert record.setup is not None and record.setup.retrieval is not None
    assert record.setup.dataset is not None and record.setup.dataset.category_map
