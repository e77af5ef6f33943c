"""A LoCoMo suite selecting ``grader: locomo-f1``: with ``--llm`` every answered question gets its
official F1 (no judge needed) and the report's table comes from it, naming the grader."""

import json
from pathlib import Path

import pytest

from memeval.benchmarks.locomo.graders import locomo_score
from tests.datasets.files import locomo_records, write
from tests.llm.conftest import SECRET, Mock, memeval

pytestmark = pytest.mark.slow  # a real memeval process against the mock inference server


def test_locomo_f1_scores_each_model_answer(mock: Mock, tmp_path: Path) -> None:
    write(tmp_path / "locomo10.json", locomo_records())
    suite = tmp_path / "bench.yaml"
    suite.write_text("suite: lc\nabout: f1\ndataset:\n  format: locomo\n  path: locomo10.json\n  grader: locomo-f1\n")
    env = {"EVAL_LLM_URL": mock.url, "EVAL_LLM_KEY": SECRET, "OPENROUTER_API_KEY": "", "HOME": str(tmp_path),
           "MEMEVAL_CACHE_DIR": str(tmp_path / "cache")}
    proc = memeval("run", str(suite), "--llm", "--out", str(tmp_path / "out"), env=env)
    assert proc.returncode in (0, 1), proc.stderr
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    assert record["benchmark"]["grader"] == "locomo-f1"
    answered = [p for p in record["probes"] if p.get("llm_answer") is not None and p["phase"] == "recall"]
    assert answered
    ids = {"multi-hop": 1, "temporal": 2, "open-domain": 3, "single-hop": 4, "adversarial": 5}
    for p in answered:
        gold = p["expect"][0] if p["expect"] else None
        assert p["grader_score"] == locomo_score(ids[p["category"]], p["llm_answer"], gold)
    md = (tmp_path / "out" / "run.md").read_text()
    assert "Measured: model answer, scored by locomo-f1." in md
