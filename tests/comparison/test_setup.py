"""The scoring setup: fingerprinted, computed for old records, and compare refusing runs scored
under different setups unless the differences are named (then labelled)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from memeval.comparison import compare_records
from memeval.comparison.setup import SetupMismatch, split_comparable
from memeval.record import Agreement, Count, JudgeSummary, Leniency, Prompt, RunRecord
from memeval.record.codec import to_json
from memeval.report.files import write_text
from memeval.score.derive import derive
from memeval.score.setup import fingerprint, flatten, scoring_setup, setup_of
from tests.comparison.factory import answerer, hits, run
from tests.conftest import FIXTURES, cli


def judged(record: RunRecord, prompt_sha: str) -> RunRecord:
    """``record`` answered and judged, the judge's prompt hashing to ``prompt_sha``."""
    base = answerer(20, 100, 0.01)
    judge = JudgeSummary(endpoint=base.endpoint, model="judge-m", prompt=Prompt("judge-v1", prompt_sha),
                         sampling=base.sampling, concurrency=1, timeout_s=1.0, retries=0, cache=base.cache,
                         incurred=base.incurred, calls=20, tokens=None, cost_usd=None, accepted=Count(10, 20),
                         agreement=Agreement(18, 20), leniency=Leniency(0, 0, 0, ()), stopped=None)
    return derive(replace(record, answerer=replace(base, judge=judge)))


def _paths(tmp_path: Path, *records: RunRecord) -> list[str]:
    paths = []
    for i, record in enumerate(records):
        paths.append(str(tmp_path / f"run{i}.json"))
        write_text(paths[-1], record.dumps())
    return paths


def test_runs_differing_only_in_judge_prompt_are_refused_then_accepted_labelled(tmp_path, capsys):
    a = judged(run(hits(18, 20), label="strict"), "a" * 64)
    b = judged(run(hits(18, 20), label="lenient"), "b" * 64)
    paths = _paths(tmp_path, a, b)
    assert cli(["compare", *paths]) == 2
    err = capsys.readouterr().err
    assert "judge.prompt.sha256" in err and "--allow-setup-diff judge.prompt.sha256" in err
    assert "answer." not in err and "engine." not in err
    assert cli(["compare", *paths, "--allow-setup-diff", "judge.prompt", "--json", str(tmp_path / "c.json")]) == 0
    out = capsys.readouterr().out
    assert "[≠ judge.prompt]" in out and "- lenient: `judge.prompt`" in out
    data = json.loads((tmp_path / "c.json").read_text())
    assert [p["setup_diff"] for p in data["profiles"]] == [[], ["judge.prompt"]]
    assert all(c["setup_diff"] == ([] if c["profile"] == "strict" else ["judge.prompt"])
               for k in data["kpis"] for c in k["cells"])


def test_what_is_compared_may_differ_and_the_rest_may_not():
    base = run(hits(18, 20), profile="baseline", flags={"K": "1"})
    other = run(hits(18, 20), profile="other", flags={"K": "2"})
    assert compare_records([base, other])["profiles"][1]["setup_diff"] == []
    tighter = replace(other, suite=replace(other.suite, resolved={"policy": {"budget_tokens": 400}}))
    with pytest.raises(SetupMismatch, match=r"pack\.budget_tokens: 1200 .* vs 400"):
        compare_records([base, derive(tighter)])
    assert compare_records([base, derive(tighter)], allow_setup_diff=["pack"])["profiles"][1]["setup_diff"] == ["pack"]


def test_a_sweep_leaves_out_a_cell_whose_setup_differs_beyond_its_flags():
    base = run(hits(18, 20), profile="baseline", flags={"K": "1"})
    flagged = run(hits(10, 20), profile="flagged", flags={"K": "2"})
    renamed = derive(replace(flagged, profile="other-engine", engine=replace(flagged.engine, name="x")))
    kept, dropped = split_comparable([base, flagged, renamed])
    assert kept == [base, flagged] and len(dropped) == 1 and "engine.name" in dropped[0]


def test_the_fingerprint_is_stable_and_moves_with_the_setup():
    a = judged(run(hits(18, 20)), "a" * 64)
    assert fingerprint(setup_of(a)) == fingerprint(scoring_setup(a)) and len(fingerprint(setup_of(a))) == 12
    assert fingerprint(setup_of(a)) != fingerprint(setup_of(judged(run(hits(18, 20)), "b" * 64)))
    assert fingerprint(setup_of(a)) == fingerprint(setup_of(judged(run(hits(3, 20)), "a" * 64)))
    assert flatten(setup_of(a))["judge.prompt.name"] == "judge-v1"


@pytest.mark.parametrize("name", ["mini-llm.json", "mini-reference.json"])
def test_an_older_record_without_a_setup_gets_it_computed_on_read(name):
    data = json.loads(Path(f"{FIXTURES}/records/{name}").read_text())
    kept = data.pop("setup")
    record = RunRecord.from_json(data)
    assert record.setup is None
    setup = setup_of(record)
    computed = to_json(setup)
    assert isinstance(computed, dict)
    # what the record kept is computed again; fields added since (retrieval depth) come on top
    kept["grading"]["cluster"] = "scenario"  # the cluster unit joined the grading setup later
    assert {k: computed[k] for k in kept} == kept and setup.grading.match == "word" and setup.pack.budget_tokens == 1200
    assert setup.retrieval is not None and setup.retrieval.pack_items == 23 and setup.retrieval.tokens_stored > 0
    assert (setup.answer is not None) == (record.answerer is not None) and setup.dataset is None


def test_runs_whose_intervals_resample_different_units_are_not_comparable():
    # Clustered intervals and paired tests over scenarios vs over categories are different statistics.
    base = run(hits(18, 20), label="by-scenario")
    other = run(hits(18, 20), label="by-category")
    other = replace(other, suite=replace(other.suite, resolved={**other.suite.resolved, "cluster": "category"}))
    a, b = scoring_setup(base), scoring_setup(other)
    assert (a.grading.cluster, b.grading.cluster) == ("scenario", "category")
    kept, dropped = split_comparable([derive(base), derive(other)], ())
    assert len(kept) == 1 and "grading.cluster" in dropped[0]
