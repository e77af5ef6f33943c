"""``memeval power`` on real run.json files written by ``memeval run``, and its exit codes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memeval.report.files import read_run
from memeval.score.power import probe_outcomes
from memeval.score.probe import blank_result
from memeval.spec.model import Probe
from tests.conftest import MEMEVAL, ROOT, cli

SUITE = os.path.join(ROOT, "specs", "agent-memory.yaml")


@pytest.fixture(scope="module")
def run_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """run.json of one real ``memeval run`` of the agent-memory suite (reference engine), run as
    its own process with its own home folder."""
    out = tmp_path_factory.mktemp("power-run")
    env = {**os.environ, "HOME": str(tmp_path_factory.mktemp("home")), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([*MEMEVAL, "run", SUITE, "--out", str(out), "--quiet"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return out / "run.json"


@pytest.mark.slow
def test_the_adapter_reads_every_probe_and_leaves_abstention_out_of_pack_hit(run_json):
    probes = read_run(str(run_json)).probes
    hits = probe_outcomes(probes, "pack-hit")
    answers = probe_outcomes(probes, "answer")
    synthesis = [p for p in probes if p.phase == "synthesis"]  # each probe once, in the phase analysed
    assert len(answers) == len(synthesis)
    assert len(hits) == sum(1 for p in synthesis if not p.abstain)
    scored = {p.key: p.hit for p in probes if p.status == "scored"}
    assert all(o.verdict == scored[o.key] for o in hits if o.key in scored)


def test_unscored_probes_have_no_verdict():
    spec = Probe(id="p", route="ask", agent="a", tenant="t", question="q?", style="lexical", expect=("x",))
    probes = [blank_result("s", spec, "synthesis", "errored", "engine down")]
    assert probe_outcomes(probes)[0].verdict is None
    with pytest.raises(ValueError, match="unknown kpi"):
        probe_outcomes(probes, "mrr")


@pytest.mark.slow
def test_power_prints_the_table_for_one_run(run_json, capsys):
    assert cli(["power", str(run_json), "--delta", "10"]) == 0
    out = capsys.readouterr().out
    record = json.loads(run_json.read_text(encoding="utf-8"))
    probes = sum(1 for p in record["probes"] if not p["abstain"] and p["status"] == "scored"
                 and p["phase"] == "synthesis")
    assert out.startswith("power: pack-hit (synthesis phase: each probe once) over 1 run(s); rate ")
    assert "to detect 10 pp at alpha 0.05, power 0.8" in out
    assert f"{'probes':<24}{probes:>8,}" in out
    assert "minimum detectable change" in out
    assert "note: needs two or more runs of the suite to measure repeat noise" in out


@pytest.mark.slow
def test_two_runs_of_a_deterministic_engine_show_no_repeat_noise(run_json, tmp_path, capsys):
    copy = tmp_path / "again.json"
    shutil.copy(run_json, copy)
    assert cli(["power", str(run_json), str(copy), "--kpi", "answer"]) == 0
    out = capsys.readouterr().out
    assert "over 2 run(s)" in out
    assert "more repeats cannot reach it" in out


@pytest.mark.parametrize("content", ["not json", "[]", '{"probes": [{"id": "x"}]}'])
def test_unreadable_input_exits_2(tmp_path, capsys, content):
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    assert cli(["power", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {bad}: not ") and ("not JSON" in err or "not a memeval run.json" in err), err


@pytest.mark.slow
def test_a_missing_file_and_a_bad_delta_exit_2(tmp_path, run_json, capsys):
    assert cli(["power", str(tmp_path / "nope.json")]) == 2
    assert cli(["power", str(run_json), "--delta", "0"]) == 2
    assert "--delta must be a positive number" in capsys.readouterr().err
    assert cli(["power"]) == 2
