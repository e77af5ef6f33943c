"""An imported benchmark suite grades as its dataset-sourced twin: ``memeval import`` writes the
official grader, and a ``memeval run --llm`` of the import gives every question the same grader
score as a run of a suite streaming the same file (real processes, the mock inference server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.datasets.files import lme_records, locomo_records, write
from tests.llm.conftest import SECRET, Mock, memeval

pytestmark = pytest.mark.slow  # real memeval processes against the mock inference server

FILES = {"longmemeval": ("longmemeval_s.json", lme_records, "longmemeval-judge"),
         "locomo": ("locomo10.json", locomo_records, "locomo-f1")}


def _run(tmp_path: Path, mock: Mock, suite: Path, out: str) -> dict[str, Any]:
    env = {"EVAL_LLM_URL": mock.url, "EVAL_LLM_KEY": SECRET, "OPENROUTER_API_KEY": "", "EVAL_JUDGE_MODEL": "",
           "HOME": str(tmp_path), "MEMEVAL_CACHE_DIR": str(tmp_path / "cache")}
    proc = memeval("run", str(suite), "--llm", "--out", str(tmp_path / out), "--quiet", env=env)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads((tmp_path / out / "run.json").read_text())


def _scores(record: dict[str, Any]) -> dict[tuple[str, str, str], Any]:
    return {(p["scenario"], p["id"], p["phase"]): (p.get("grader_score"), p.get("grades")) for p in record["probes"]}


@pytest.mark.parametrize("fmt", ["longmemeval", "locomo"])
def test_an_imported_suite_grades_as_the_dataset_route(mock: Mock, tmp_path: Path, fmt: str) -> None:
    name, records, grader = FILES[fmt]
    write(tmp_path / name, records())
    streamed = tmp_path / "bench.yaml"
    streamed.write_text(f"suite: s\nabout: streamed\ndataset:\n  format: {fmt}\n  path: {name}\n  grader: {grader}\n")
    proc = memeval("import", fmt, str(tmp_path / name), "-o", str(tmp_path / "imported"), env={"HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    imported = _run(tmp_path, mock, tmp_path / "imported" / "suite.yaml", "imported-run")
    direct = _run(tmp_path, mock, streamed, "streamed-run")
    assert imported["benchmark"]["grader"] == direct["benchmark"]["grader"] == grader
    scores = _scores(imported)
    assert scores == _scores(direct)
    graded = [s for s, _ in scores.values() if s is not None]
    assert graded and len(set(graded)) > 1  # real scores, not one constant
    if fmt == "longmemeval":  # the judge ran: its summary is recorded the same way on both routes
        assert imported["benchmark"]["judge"]["judged"] == direct["benchmark"]["judge"]["judged"] > 0


def test_a_preference_question_is_answered_and_judged_into_the_task_average(mock: Mock, tmp_path: Path) -> None:
    write(tmp_path / "longmemeval_s.json", lme_records())
    suite = tmp_path / "bench.yaml"
    suite.write_text("suite: s\nabout: a\ndataset:\n  format: longmemeval\n  path: longmemeval_s.json\n"
                     "  grader: longmemeval-judge\n")
    record = _run(tmp_path, mock, suite, "run")
    preference = next(p for p in record["probes"] if p["id"] == "q-0a995998" and p["phase"] == "recall")
    assert preference["llm_answer"] and preference["llm_ok"] is None  # memeval's matcher has nothing to match
    assert preference["grader_score"] in (0.0, 1.0) and preference["hit"] is None and preference["answer_ok"] is None
    templates = {t["key"]: t["name"] for t in record["benchmark"]["judge"]["templates"]}
    assert "single-session-preference" in templates
    md = (tmp_path / "run" / "run.md").read_text()
    section = md[md.index("## Benchmark"):md.index("## KPIs")]
    verdict = "100.0%" if preference["grader_score"] == 1.0 else "0.0%"
    assert f"| single-session-preference | {verdict} | 1 |" in section
    assert "task-averaged (mean of 5 of 6 type means)" in section  # five types in the file (none is ssa), all judged
    assert "judged only" not in section
