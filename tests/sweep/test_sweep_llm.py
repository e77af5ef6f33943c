"""A sweep's repeats are independent samples: with ``llm: true`` each repeat asks the model
again (its own cache salt) and the summary shows per cell its model calls, its cross-run cache
hits (0: no repeat is served another's answers) and its in-run reuses."""

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
    # a run's own identical (pack, question) pairs (a probe asked in both phases) are in-run reuses,
    # not cache hits; nothing of repeat 1 is served to repeat 2: both make the same set of model calls
    assert first["model_calls"] > 0 and second["model_calls"] == first["model_calls"]
    assert first["cache_hits"] == 0 and second["cache_hits"] == 0
    assert second["in_run_reuses"] == first["in_run_reuses"] > 0
    assert mock.chat_calls() == first["model_calls"] + second["model_calls"]
    runs = [json.loads((out / f"baseline-r{r}" / "run.json").read_text()) for r in (1, 2)]
    assert [run["answerer"]["cache"]["salt"] for run in runs] == ["repeat-1", "repeat-2"]
    cached = [p for p in runs[1]["probes"] if p.get("llm_cached")]
    assert len(cached) == second["in_run_reuses"]  # each reuse is marked cached in run.json
    summary = (out / "summary.md").read_text()
    assert "| Model calls | Cross-run cache hits | In-run reuses |" in summary
    assert f"| {second['model_calls']} | 0 | {second['in_run_reuses']} |" in summary
    assert "| baseline-r2 | ok | 4166" in summary
