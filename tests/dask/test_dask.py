"""Units on Dask give the same records as here; --shard slices merge back into the whole run;
the driver is the one writer; a unit whose worker dies runs again and counts once."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from memeval.errors import UsageError
from memeval.runner.executor import DaskExecutor, make_executor, parse_shard, shard_slice
from tests.conftest import ROOT, cli
from tests.datasets.files import lme_records, write
from tests.sweep.conftest import write_matrix

MEMEVAL = [sys.executable, "-c", "from memeval.cli import main; main()"]
FAST = """\
flag_prefix: CORTEX_
baseline: {env: {CORTEX_ENTITY_GRAPH: "1", FAKE_CORTEX_INDEX_DELAY: "0.02", FAKE_CORTEX_ENRICH_DELAY: "0.01"}}
run_args: {enrich_wait_s: 0, settle_timeout_s: 5}
cell_timeout_s: 120
"""
_VARYING = {"run_id", "created_at", "timings", "latency", "port", "seconds"}
_RUN_ID = re.compile(r"\b\d{9,11}-[0-9a-f]{6}\b")  # as memeval.runner.checkpoint.new_run_id makes them


def normalised(record: Any) -> Any:
    """A run record (JSON) without what differs between two runs of the same work: run ids (also
    inside tenant names), start time, ports and every duration (keys ``ms``/``*_ms``, timings,
    latency, KPIs in ms)."""
    if isinstance(record, dict):
        if record.get("unit") == "ms":
            return {k: normalised(v) for k, v in record.items() if k not in ("value", "ci95")}
        return {k: normalised(v) for k, v in record.items()
                if k not in _VARYING and k != "ms" and not k.endswith("_ms")}
    if isinstance(record, list):
        return [normalised(v) for v in record]
    if isinstance(record, str):
        return _RUN_ID.sub("<run>", record)
    return record


def _read(folder: Path) -> Any:
    return json.loads((folder / "run.json").read_text(encoding="utf-8"))


@pytest.fixture
def lme_suite(tmp_path: Path) -> Path:
    """A LongMemEval-format file imported as a suite: one scenario per question."""
    src = write(tmp_path / "longmemeval_s.json", lme_records())
    assert cli(["import", "longmemeval", str(src), "-o", str(tmp_path / "lme")]) == 0
    return tmp_path / "lme" / "suite.yaml"


def _units(suite: Path) -> int:
    """How many scenarios (one per imported question) the imported suite holds."""
    return len(list((suite.parent / "scenarios").glob("*.yaml")))


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(MEMEVAL + list(args), capture_output=True, text=True, timeout=300, cwd=ROOT)


@pytest.mark.slow
def test_a_dataset_suite_on_a_two_worker_cluster_gives_the_local_record(lme_suite: Path, tmp_path: Path) -> None:
    here, there = tmp_path / "local", tmp_path / "dask"
    assert _run("run", str(lme_suite), "--out", str(here), "--quiet").returncode == 0
    done = _run("run", str(lme_suite), "--out", str(there), "--quiet", "--executor", "dask", "--workers", "2")
    assert done.returncode == 0, done.stderr
    local, remote = _read(here), _read(there)
    assert len(local["scenarios"]) == _units(lme_suite) and local["probes"]
    assert normalised(remote) == normalised(local)
    journal = [json.loads(line) for line in (there / "checkpoint.jsonl").read_text().splitlines()]
    assert sorted(e["scenario"]["id"] for e in journal if e["kind"] == "finished") == \
        sorted(s["id"] for s in local["scenarios"])  # the driver journalled every unit, once


@pytest.mark.slow
def test_resume_on_dask_skips_the_scenarios_the_journal_holds(lme_suite: Path, tmp_path: Path) -> None:
    there = tmp_path / "dask"
    assert _run("run", str(lme_suite), "--out", str(there), "--quiet", "--executor", "dask").returncode == 0
    journal = there / "checkpoint.jsonl"
    lines = journal.read_text().splitlines()
    kept = [line for line in lines if json.loads(line)["kind"] != "finished"] + \
        [line for line in lines if json.loads(line)["kind"] == "finished"][:2]
    journal.write_text("\n".join(kept) + "\n")  # as if killed after two units came back
    done = _run("run", str(lme_suite), "--resume", str(there), "--executor", "dask")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("taken from the checkpoint") == 2
    assert done.stderr.count(": submitted") == _units(lme_suite) - 2
    assert len(_read(there)["scenarios"]) == _units(lme_suite)


@pytest.mark.slow
def test_the_fake_sweep_on_a_two_worker_cluster_gives_the_local_records(tmp_path: Path) -> None:
    matrix = write_matrix(tmp_path, "matrix: dask-eq\n" + FAST + textwrap.dedent("""\
    repeat: 1
    parallel: 2
    ports: {from: 41760, to: 41790}  # apart from the other sweep tests: a closed server leaves its port in TIME_WAIT
    profiles:
      - {name: baseline}
      - {name: salience-high, env: {CORTEX_SALIENCE_WEIGHT: "0.3"}}
    """))
    here, there = tmp_path / "local", tmp_path / "dask"
    assert _run("sweep", matrix, "--out", str(here), "--quiet").returncode == 0
    done = _run("sweep", matrix, "--out", str(there), "--quiet", "--executor", "dask")
    assert done.returncode == 0, done.stderr
    for cell in ("baseline-r1", "salience-high-r1"):
        assert normalised(_read(there / cell)) == normalised(_read(here / cell))
        assert sorted(os.listdir(there / cell)) == sorted(os.listdir(here / cell))
    summaries = [json.loads((d / "summary.json").read_text()) for d in (here, there)]
    cells = [[{k: v for k, v in c.items() if k != "folder"} for c in normalised(s["cells"])] for s in summaries]
    assert cells[1] == cells[0]
    assert all(c["status"] == "ok" for c in summaries[1]["cells"])


def test_merging_two_shards_gives_the_unsharded_run(lme_suite: Path, tmp_path: Path) -> None:
    whole, one, two, merged = (tmp_path / n for n in ("whole", "s1", "s2", "merged"))
    assert cli(["run", str(lme_suite), "--out", str(whole), "--quiet"]) == 0
    assert cli(["run", str(lme_suite), "--out", str(one), "--quiet", "--shard", "1/2"]) == 0
    assert cli(["run", str(lme_suite), "--out", str(two), "--quiet", "--shard", "2/2"]) == 0
    first = _read(one)
    assert first["shard"] == {"index": 1, "count": 2} and "shard" not in _read(whole)
    ids = sorted(s["id"] for s in _read(whole)["scenarios"])
    assert [s["id"] for s in first["scenarios"]] == [i for i in [s["id"] for s in _read(whole)["scenarios"]]
                                                     if i in ids[0::2]]
    assert cli(["merge", str(two), str(one), "-o", str(merged), "--quiet"]) == 0
    assert normalised(_read(merged)) == normalised(_read(whole))
    assert (merged / "run.md").exists() and (merged / "run.html").exists()


def test_merge_refuses_overlapping_missing_and_foreign_shards(lme_suite: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    one, two, other = tmp_path / "s1", tmp_path / "s2", tmp_path / "other"
    assert cli(["run", str(lme_suite), "--out", str(one), "--quiet", "--shard", "1/3"]) == 0
    assert cli(["run", str(lme_suite), "--out", str(two), "--quiet", "--shard", "2/3"]) == 0
    assert cli(["run", os.path.join(ROOT, "tests", "fixtures", "mini.yaml"), "--out", str(other), "--quiet",
                "--shard", "3/3"]) == 0
    capsys.readouterr()
    assert cli(["merge", str(one), str(one), "-o", str(tmp_path / "m1")]) == 2
    assert "shard.index 1/3 twice" in capsys.readouterr().err
    assert cli(["merge", str(one), str(two), "-o", str(tmp_path / "m2")]) == 2
    assert "shard.index 3 of 3 missing" in capsys.readouterr().err
    assert cli(["merge", str(one), str(two), str(other), "-o", str(tmp_path / "m3")]) == 2
    assert "suite.sha256" in capsys.readouterr().err
    assert not (tmp_path / "m3").exists()


def test_a_shard_is_every_nth_unit_by_id_from_the_ith() -> None:
    keys = ["d", "a", "c", "b", "e"]
    assert shard_slice(keys, 1, 2) == ["a", "c", "e"] and shard_slice(keys, 2, 2) == ["b", "d"]
    assert sorted(sum((shard_slice(keys, i, 3) for i in (1, 2, 3)), [])) == sorted(keys)
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/2", "3/2", "1", "a/b", "1/0"):
        with pytest.raises(UsageError, match="--shard"):
            parse_shard(bad)


def test_without_dask_installed_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # importing it now raises ImportError
    with pytest.raises(UsageError, match=r"pip install 'memeval-harness\[dask\]'"):
        make_executor("dask")
    with pytest.raises(UsageError, match="--scheduler needs --executor dask"):
        make_executor("local", scheduler="tcp://127.0.0.1:8786")


def _die_once(marker: str) -> str:
    """On the first call (no marker file yet) kill this worker process mid-unit."""
    if not os.path.exists(marker):
        Path(marker).write_text("died", encoding="utf-8")
        os._exit(1)
    return f"ran in {os.getpid()}"


@pytest.mark.slow
def test_a_unit_whose_worker_dies_runs_again_elsewhere_and_counts_once(tmp_path: Path) -> None:
    executor = DaskExecutor(workers=2)
    try:
        marker = str(tmp_path / "died")
        results = list(executor.map(_die_once, [("u1", marker)]))
    finally:
        executor.close()
    assert len(results) == 1 and results[0][0] == "u1" and results[0][1].startswith("ran in")
    assert Path(marker).read_text() == "died" and len(executor.timings) == 1
