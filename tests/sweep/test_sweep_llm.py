"""A sweep's repeats are independent samples: with ``llm: true`` each repeat asks the model
again (its own cache salt) and the summary counts every cell's cache hits."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap

import pytest

from tests.conftest import MEMEVAL
from tests.llm.conftest import SECRET, Mock, mock, mock_server  # noqa: F401 (fixtures)
from tests.sweep.conftest import write_matrix


@pytest.mark.slow
def test_two_repeats_make_two_sets_of_model_calls(tmp_path, mock: Mock):  # noqa: F811
    matrix = write_matrix(tmp_path, textwrap.dedent("""\
    matrix: llm-repeats
    flag_prefix: CORTEX_
    baseline: {env: {CORTEX_ENTITY_GRAPH: "1", FAKE_CORTEX_INDEX_DELAY: "0.02", FAKE_CORTEX_ENRICH_DELAY: "0.01"}}
    run_args: {enrich_wait_s: 0, settle_timeout_s: 5, llm: true}
    cell_timeout_s: 90
    repeat: 2
    parallel: 1
    ports: {from: 41660, to: 41670}
    profiles:
      - {name: baseline}
    """))
    env = {**os.environ, "EVAL_LLM_URL": mock.url, "EVAL_LLM_KEY": SECRET, "OPENROUTER_API_KEY": "",
           "MEMEVAL_CACHE_DIR": str(tmp_path / "cache")}
    out = tmp_path / "out"
    proc = subprocess.run([*MEMEVAL, "sweep", matrix, "--out", str(out)], capture_output=True, text=True,
                          timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr
    cells = {c["label"]: c for c in json.loads((out / "summary.json").read_text())["cells"]}
    first, second = cells["baseline-r1"], cells["baseline-r2"]
    # a run's own identical (pack, question) pairs (a probe asked in both phases) hit within the run;
    # nothing of repeat 1 is served to repeat 2, so both repeats ask the model the same number of times
    assert first["cache_misses"] > 0 and second["cache_misses"] == first["cache_misses"]
    assert second["cache_hits"] == first["cache_hits"] < first["cache_misses"]
    assert mock.chat_calls() == first["cache_misses"] + second["cache_misses"]
    salts = [json.loads((out / f"baseline-r{r}" / "run.json").read_text())["answerer"]["cache"]["salt"] for r in (1, 2)]
    assert salts == ["repeat-1", "repeat-2"]
    assert "| baseline-r2 | ok | 4166" in (out / "summary.md").read_text()
    assert f"| {first['cache_hits']}/{first['cache_misses']} |" in (out / "summary.md").read_text()
