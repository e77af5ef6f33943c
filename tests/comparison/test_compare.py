"""compare: grouping, the baseline, the noise rule, paired tests, flips, errors and the text."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from memeval.cli import cli
from memeval.comparison import compare_records, render_comparison
from memeval.errors import UsageError
from memeval.record import Usage
from memeval.report.files import write_text
from tests.comparison.factory import hits, probe, run
from tests.conftest import cli as run_cli


def cell(comparison: dict, name: str, profile: str) -> dict:
    kpi = next(k for k in comparison["kpis"] if k["name"] == name)
    return next(c for c in kpi["cells"] if c["profile"] == profile)


def test_one_probe_flipping_is_within_noise():
    comparison = compare_records([run(hits(18, 20), profile="baseline"), run(hits(19, 20), profile="tweak")])
    c = cell(comparison, "pack hit (synthesis)", "tweak")
    assert (c["delta"], c["threshold"], c["p"], c["mark"]) == (5.0, 5.0, 1.0, "~")
    assert comparison["moved"] == {"tweak": []}
    assert comparison["flips"]["tweak"][0] == {"kpi": "pack hit (synthesis)", "scenario": "s", "probe": "p18", "phase": "synthesis",
                                                "before": "0/1", "after": "1/1", "change": "gained"}


def test_many_probes_moving_is_a_move_with_its_p_value():
    comparison = compare_records([run(hits(10, 20), profile="baseline"), run(hits(20, 20), profile="tweak")])
    c = cell(comparison, "pack hit (synthesis)", "tweak")
    assert (c["delta"], c["gained"], c["lost"], c["mark"]) == (50.0, 10, 0, "▲")
    assert c["p"] == round(2 / 1024, 4)
    moved = {m["name"]: m for m in comparison["moved"]["tweak"]}
    assert moved["pack hit (synthesis)"]["mark"] == "▲" and moved["extractive answer"]["mark"] == "▲"
    text = render_comparison(comparison)
    assert "▲ accuracy / pack hit (synthesis): 50.0% → 100.0% (+50.0 pp, p=0.002)" in text


def test_a_big_delta_without_a_paired_test_behind_it_does_not_count():
    base = run([probe(f"p{i}", i < 10) for i in range(20)], profile="baseline")
    other = run([probe(f"q{i}", True) for i in range(20)], profile="tweak")
    c = cell(compare_records([base, other]), "pack hit (synthesis)", "tweak")
    assert (c["delta"], c["p"], c["mark"]) == (50.0, 1.0, "~")


def test_repeats_are_averaged_and_their_spread_is_noise():
    base = [run(hits(10, 20), profile="baseline"), run(hits(16, 20), profile="baseline")]
    noisy = compare_records(base + [run(hits(18, 20), profile="tweak")] * 2)
    c = cell(noisy, "pack hit (synthesis)", "tweak")
    assert (c["value"], c["delta"], c["threshold"], c["mark"]) == (90.0, 25.0, 30.0, "~")
    steady = [run(hits(10, 20), profile="baseline"), run(hits(11, 20), profile="baseline")]
    c = cell(compare_records(steady + [run(hits(20, 20), profile="tweak")] * 2), "pack hit (synthesis)", "tweak")
    assert (c["delta"], c["threshold"], c["mark"]) == (47.5, 5.0, "▲") and c["p"] < 0.01
    assert noisy["profiles"][0]["runs"] == 2


def test_worse_and_changed_marks_and_latency_floor():
    base = run(hits(20, 20), profile="baseline", timings={"pre_turn (recall)": [10.0], "synthesis (all builds)": [100.0]})
    other = run(hits(5, 20), profile="slow", timings={"pre_turn (recall)": [14.0], "synthesis (all builds)": [200.0]})
    comparison = compare_records([base, other])
    assert cell(comparison, "pack hit (synthesis)", "slow")["mark"] == "▼"
    # one sample a run is no latency measurement (issue 30): it needs repeats, whatever its size
    assert cell(comparison, "pre_turn p50", "slow")["mark"] == "?"
    assert cell(comparison, "belief builds", "slow")["mark"] == "?"
    assert "200.00 ms (+100%, n=1/1, needs repeats)" in render_comparison(comparison)


def test_baseline_is_the_profile_named_baseline_else_the_first_else_the_one_asked_for():
    a, b = run(hits(1, 2), profile="a"), run(hits(1, 2), profile="baseline")
    assert compare_records([a, b])["baseline"] == "baseline"
    assert compare_records([a, run(hits(1, 2), label="c")])["baseline"] == "a"
    assert compare_records([a, b], baseline="a")["profiles"][0]["name"] == "a"
    with pytest.raises(UsageError, match="no runs of 'nope'"):
        compare_records([a, b], baseline="nope")


def test_runs_group_by_profile_falling_back_to_label_and_flags_changed():
    runs = [run(hits(1, 2), label="x-r1", profile="baseline", flags={"CORTEX_A": "1", "CORTEX_B": "1"}),
            run(hits(1, 2), label="x-r2", profile="baseline", flags={"CORTEX_A": "1", "CORTEX_B": "1"}),
            run(hits(1, 2), label="plain", flags={"CORTEX_A": "0"})]
    profiles = compare_records(runs)["profiles"]
    assert [(p["name"], p["runs"], p["flags_changed"]) for p in profiles] == [
        ("baseline", 2, []), ("plain", 1, ["CORTEX_A=0", "CORTEX_B unset"])]


def _write_runs(tmp_path, *records) -> list[str]:
    paths = []
    for i, record in enumerate(records):
        path = str(tmp_path / f"run{i}.json")
        write_text(path, record.dumps())
        paths.append(path)
    return paths


def test_cli_writes_json_and_fails_on_regression(tmp_path):
    paths = _write_runs(tmp_path, run(hits(20, 20), profile="baseline"), run(hits(5, 20), profile="worse"))
    out = CliRunner().invoke(cli, ["compare", *paths, "--json", str(tmp_path / "c.json")], standalone_mode=False)
    assert out.exception is None and "▼" in out.output
    assert json.loads((tmp_path / "c.json").read_text())["moved"]["worse"][0]["mark"] == "▼"
    assert run_cli(["compare", *paths, "--fail-on-regression"]) == 1


@pytest.mark.parametrize("content, message", [(None, "no run.json files"), ("{not json", "not JSON"),
                                              ('{"label": "x"}', "not a memeval run.json")])
def test_errors_exit_2_naming_the_file(tmp_path, capsys, content, message):
    args = ["compare"]
    if content is not None:
        bad = tmp_path / "bad.json"
        bad.write_text(content)
        args.append(str(bad))
    code = run_cli(args)
    err = capsys.readouterr().err
    assert code == 2 and message in err
    if content is not None:
        assert "bad.json" in err


def test_compare_text_golden(golden):
    timings = {"pre_turn (log + recall)": [10.0, 12.0], "probe ask": [20.0]}
    base = [run(hits(12, 20) + hits(3, 4, "conf"), label=f"baseline-r{r}", profile="baseline", timings=timings,
                flags={"CORTEX_ENTITY_GRAPH": "1"}, usage=Usage(40, 4000, 0.4, {}))
            for r in (1, 2)]
    graph = [run(hits(19, 20) + hits(3, 4, "conf"), label=f"no-graph-r{r}", profile="no-graph", timings=timings,
                 flags={"CORTEX_ENTITY_GRAPH": "0"}, usage=Usage(20, 2000, 0.2, {}))
             for r in (1, 2)]
    same = [run(hits(13, 20) + hits(3, 4, "conf"), label="salience-high-r1", profile="salience-high", timings=timings,
                flags={"CORTEX_ENTITY_GRAPH": "1", "CORTEX_SALIENCE_WEIGHT": "0.3"},
                usage=Usage(41, 4100, 0.41, {}))]
    golden("compare-sweep.txt", render_comparison(compare_records(base + graph + same)))
