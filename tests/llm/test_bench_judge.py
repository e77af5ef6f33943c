"""The benchmark judge graders applied at ``--llm``: real ``memeval run`` processes on files in the
published formats, against the mock inference server (whose word-set judge reads the benchmarks'
prompt shapes), and the judge run in-process to count its calls."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from memeval.benchmarks.locomo.judge import shipped as shipped_template
from memeval.benchmarks.longmemeval.judge import lme_templates
from memeval.llm.answer import summary_lines
from memeval.llm.bench_judge import bench_judge_record
from memeval.llm.judge import job, judge_record
from memeval.llm.regrade import regrade
from memeval.record import RunRecord
from memeval.report.files import read_run
from memeval.score.probe import judged_only
from tests.datasets.files import lme_records, locomo_records, write
from tests.llm.conftest import SECRET, Mock, memeval

pytestmark = pytest.mark.slow  # real memeval processes against the mock inference server

UPSTREAM_STYLE = "Question: {}\n\nCorrect Answer: {}\n\nModel Response: {}\n\nIs the model response correct? Answer yes or no only."


def _run(tmp_path: Path, mock: Mock, fmt: str, dataset: str, *args: str) -> tuple[dict[str, Any], str]:
    """run.json and run.md of ``memeval run`` on a suite whose ``dataset:`` block is ``dataset``."""
    if fmt == "longmemeval":
        write(tmp_path / "longmemeval_s.json", lme_records())
        path = "longmemeval_s.json"
    else:
        write(tmp_path / "locomo10.json", locomo_records())
        path = "locomo10.json"
    suite = tmp_path / "bench.yaml"
    suite.write_text(f"suite: {fmt}-judged\nabout: judged\ndataset:\n  format: {fmt}\n  path: {path}\n{dataset}")
    env = {"EVAL_LLM_URL": mock.url, "EVAL_LLM_KEY": SECRET, "OPENROUTER_API_KEY": "", "EVAL_JUDGE_MODEL": "",
           "HOME": str(tmp_path), "MEMEVAL_CACHE_DIR": str(tmp_path / "cache")}
    out = tmp_path / "out"
    proc = memeval("run", str(suite), "--llm", "--out", str(out), "--quiet", *args, env=env)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads((out / "run.json").read_text()), (out / "run.md").read_text()


def _recall(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["id"]: p for p in record["probes"] if p["phase"] == "recall"}


def test_longmemeval_judge_scores_every_answer_with_its_types_prompt(mock: Mock, tmp_path: Path) -> None:
    record, md = _run(tmp_path, mock, "longmemeval", "  grader: longmemeval-judge\n")
    judge = record["benchmark"]["judge"]
    assert judge["grader"]["name"] == "longmemeval-judge" and judge["grader"]["upstream_file"] == "src/evaluation/evaluate_qa.py"
    assert (judge["model"], judge["official_model"], judge["served"]) == ("gpt-4o-2024-08-06", "gpt-4o-2024-08-06",
                                                                          ["mock-chat"])
    assert judge["sampling"] == {"temperature": 0.0, "max_tokens": 10, "json_reply": False}
    shipped = lme_templates()
    assert {t["key"]: t["sha256"] for t in judge["templates"]} == {k: t.sha256 for k, t in shipped.items()}
    assert all(t["source"] == "shipped" for t in judge["templates"])
    probes = _recall(record)
    assert {p["grader_score"] for p in probes.values()} <= {0.0, 1.0}
    assert probes["q-e47becba"]["grader_score"] == 1.0  # the answer holds the gold degree
    assert probes["q-6a1eabeb"]["llm_answer"] == "My spare key is in the mailbox." and probes["q-6a1eabeb"]["grader_score"] == 0.0
    # the abstention prompt (no reference line: the mock says yes to "unknown"); the answer prompt would say no
    assert probes["q-e47becba_abs"]["llm_answer"] == "unknown" and probes["q-e47becba_abs"]["grader_score"] == 1.0
    assert all(p["grades"] == {"longmemeval-judge": p["grader_score"]} for p in probes.values())
    assert judge["questions"] == judge["judged"] == sum(1 for p in record["probes"] if p.get("llm_answer") is not None)
    # the asking time is recorded and told to the model
    assert probes["q-gpt4_2655b836"]["asked_at"] == "2023-03-01T10:00" and record["answerer"]["prompt"]["name"] == "answer-dated-v1"
    assert "Measured: model answer, judged by longmemeval-judge." in md and "| question type | accuracy (longmemeval-judge) | n |" in md
    assert "Judge `longmemeval-judge` v1: model `gpt-4o-2024-08-06` asked" in md and "served as mock-chat" in md
    assert f"Template `lme-abstention` (shipped, sha256 `{shipped['abstention'].sha256[:12]}`) for abstention." in md


def test_locomo_reports_f1_and_j_and_j_skips_category_5(mock: Mock, tmp_path: Path) -> None:
    record, md = _run(tmp_path, mock, "locomo", "  grader: mem0-j\n", "--judge-repeats", "2")
    judge = record["benchmark"]["judge"]
    assert judge["consistency"] == {"repeats": 2, "unanimous": judge["judged"], "n": judge["judged"], "fleiss_kappa": 1.0}
    assert judge["calls"] == 2 * judge["judged"] and "Self-consistency: 100%" in md
    assert judge["sampling"] == {"temperature": 0.0, "max_tokens": None, "json_reply": True}
    assert judge["templates"] == [{"key": "j", "name": "mem0-j", "sha256": shipped_template("mem0-j").sha256,
                                   "source": "shipped"}]
    answered = [p for p in record["probes"] if p.get("llm_answer") is not None]
    adversarial = [p for p in answered if p["category"] == "adversarial"]
    assert adversarial and judge["skipped"] == len(adversarial) and judge["judged"] == len(answered) - len(adversarial)
    for p in adversarial:  # skipped, not wrong
        assert p.get("grader_score") is None and p["grader_reason"].startswith("skipped: mem0's J")
        assert p["grades"]["mem0-j"] is None and p["grades"]["locomo-f1"] is not None
    others = [p for p in answered if p["category"] != "adversarial"]
    assert all(p["grader_score"] in (0.0, 1.0) and p["grades"]["mem0-j"] == p["grader_score"] for p in others)
    assert {p["grader_score"] for p in others} == {0.0, 1.0}
    assert "| category | F1 (locomo-f1) | n |" in md and "| category | J (mem0-j) | n |" in md
    assert f"mem0's J does not score category 5 (adversarial): {sum(1 for p in adversarial if p['phase'] == 'recall')} " \
           "question(s) skipped" in md
    disagree = [p for p in _recall(record).values()
                if p.get("grader_score") is not None and p["llm_ok"] is not None and (p["grader_score"] == 1.0) != p["llm_ok"]]
    assert disagree and all(f"| {p['id']} | {p['category']} | judging |" in md for p in disagree)


def test_a_users_template_is_used_and_its_sha256_recorded(mock: Mock, tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    mine = tmp_path / "prompts" / "temporal.txt"
    mine.write_text(UPSTREAM_STYLE)
    record, md = _run(tmp_path, mock, "longmemeval",
                      "  grader: longmemeval-judge\n  prompts:\n    temporal-reasoning: prompts/temporal.txt\n")
    used = {t["key"]: t for t in record["benchmark"]["judge"]["templates"]}
    assert used["temporal-reasoning"]["sha256"] == hashlib.sha256(mine.read_bytes()).hexdigest()
    assert used["temporal-reasoning"]["source"] == str(mine) and used["temporal-reasoning"]["name"] == "temporal"
    assert used["knowledge-update"]["source"] == "shipped"
    setup = record["setup"]["grader_judge"]  # in the scoring setup, so compare refuses a run judged otherwise
    assert setup["templates"]["temporal-reasoning"] == used["temporal-reasoning"]["sha256"]
    assert (setup["grader"], setup["model"]) == ("longmemeval-judge-1", "gpt-4o-2024-08-06")
    assert f"Template `temporal` ({mine}, sha256 `{used['temporal-reasoning']['sha256'][:12]}`)" in md


@pytest.fixture(scope="module")
def lme_run(tmp_path_factory: pytest.TempPathFactory, mock_server: Mock) -> Path:
    """run.json of a LongMemEval run with --llm (and its benchmark judge)."""
    folder = tmp_path_factory.mktemp("lme-run")
    _run(folder, mock_server, "longmemeval", "  grader: longmemeval-judge\n")
    return folder / "out" / "run.json"


def _chat_calls(mock: Mock, action: Any) -> int:
    before = mock.chat_calls()
    action()
    return mock.chat_calls() - before


def test_judge_repeats_make_the_judge_calls_again_and_measure_agreement(mock: Mock, settings, lme_run: Path) -> None:
    record: RunRecord = read_run(str(lme_run))
    once = _chat_calls(mock, lambda: bench_judge_record(record, settings(salt="a")))
    twice_record: list[RunRecord] = []
    twice = _chat_calls(mock, lambda: twice_record.append(bench_judge_record(
        record, _repeated(settings(salt="b"), 2))))
    assert once > 0 and twice == 2 * once
    judged = twice_record[0].benchmark.judge  # type: ignore[union-attr]
    assert judged is not None and judged.consistency is not None
    assert judged.consistency.repeats == 2 and judged.consistency.n == judged.judged
    assert judged.consistency.unanimous == judged.consistency.n  # the mock is deterministic
    assert judged.calls == 2 * judged.judged
    assert record.answerer is not None
    assert f"benchmark judge: longmemeval-judge judged {judged.judged} of {judged.questions} answers (0 skipped by its " \
           "rule) with gpt-4o-2024-08-06" in summary_lines(record.answerer, judged)[1]
    # the generic judge too: its answers judged twice, the leniency check once
    base = settings(judge=True, salt="c")
    assert base.judge is not None
    single = _chat_calls(mock, lambda: judge_record(record, base.judge, base.cache))
    double = _chat_calls(mock, lambda: judge_record(record, base.judge, _repeated(settings(salt="d"), 2).cache, 2))
    answers = len({json.dumps(job(p, p.llm_answer or "")) for p in record.probes
                   if p.scored and p.llm_answer is not None and not judged_only(p)})  # a rubric has no reference for it
    assert double - single == answers > 0


def _repeated(llm: Any, n: int) -> Any:
    from dataclasses import replace

    return replace(llm, judge_repeats=n)


def test_regrade_with_judge_judges_a_benchmark_run_again(mock: Mock, settings, lme_run: Path) -> None:
    record: RunRecord = read_run(str(lme_run))
    calls = mock.chat_calls()
    again = regrade(record, settings(judge=True, salt="regrade"), answer=False, source=str(lme_run))
    assert mock.chat_calls() > calls and again.benchmark is not None and again.benchmark.judge is not None
    assert again.benchmark.judge.cache.salt == "regrade"  # judged by this regrade, not carried over from the run
    assert [p.grader_score for p in again.probes] == [p.grader_score for p in record.probes]  # the mock is deterministic
    assert again.regrade is not None and again.regrade.judged
