"""`memeval import`: a verified file becomes ordinary YAML that validates and runs on the
reference engine; a wrong file is refused (exit 2) before anything is written."""

import json

import pytest
import yaml

from memeval.benchmarks.locomo.mapping import turn_texts
from memeval.benchmarks.source import iter_units, scan
from memeval.report.files import read_run
from memeval.runner.evidence import evidence_recall, retrieved_ids
from tests.conftest import cli
from tests.datasets.files import lme_records, locomo_records, write


def _load(path):
    return yaml.safe_load(path.read_text())


@pytest.fixture
def lme_suite(tmp_path, capsys):
    src = write(tmp_path / "longmemeval_s.json", lme_records())
    assert cli(["import", "longmemeval", str(src), "-o", str(tmp_path / "lme")]) == 0
    return tmp_path / "lme", capsys.readouterr().out


def test_longmemeval_import_maps_each_question_to_its_own_dated_scenario(lme_suite):
    out, printed = lme_suite
    assert "wrote" in printed and "6 scenarios, 6 probes" in printed and "not mapped" not in printed
    suite = _load(out / "suite.yaml")
    assert suite["defaults"]["epoch"] == "2023-01-10T00:00:00Z"  # the earliest selected session
    assert suite["x-dataset"]["variant"] == "s" and len(suite["x-dataset"]["sha256"]) == 64
    assert "x-unmapped" not in suite
    preference = _load(out / "scenarios" / "lme-0a995998.yaml")["probes"][0]  # judged only: the rubric is its gold
    assert "expect" not in preference and "abstain" not in preference and preference["gold"].startswith("The user would prefer")
    assert preference["category"] == "single-session-preference" and preference["evidence"] == ["answer_p1:0"]
    abstention = _load(out / "scenarios" / "lme-e47becba_abs.yaml")["probes"][0]  # graded on the answer alone
    assert abstention["abstain"] is True and abstention["answer_only"] is True and "expect" not in abstention
    scenario = _load(out / "scenarios" / "lme-e47becba.yaml")
    assert scenario["tenants"] == ["q-e47becba"]
    threads = scenario["threads"]
    assert [t["x-session_id"] for t in threads] == ["answer_280352e9", "sharegpt_a1_0", "ultrachat_9_1"]
    assert [t["day"] for t in threads] == [130, 132, 135] and threads[0]["time"] == "02:21" and threads[0]["replay"] is True
    assert threads[0]["exchanges"][0]["ids"] == ["answer_280352e9:0", "answer_280352e9:1"]
    assert threads[0]["exchanges"][0]["reply"].startswith("Congratulations")
    probe = scenario["probes"][0]
    assert probe["expect"] == ["Business Administration"] and probe["category"] == "single-session-user"
    assert probe["evidence"] == ["answer_280352e9:0"]
    assert probe["x-question_date"] == "2023/05/30 (Tue) 23:17" and probe["x-asked_day"] == 140
    assert probe["asked_at"] == "2023-05-30T23:17"  # the asking time, given to the model answerer
    assert _load(out / "scenarios" / "lme-118b2229.yaml")["probes"][0]["expect"] == ["3"]


def test_imported_suites_validate_and_run_on_the_reference_engine(lme_suite, tmp_path, capsys):
    out, _ = lme_suite
    assert cli(["validate", str(out / "suite.yaml")]) == 0
    assert cli(["run", str(out / "suite.yaml"), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    record = read_run(str(tmp_path / "run" / "run.json"))
    probes = {p.scenario: p for p in record.probes if p.phase == "recall"}
    assert set(probes) == {"lme-e47becba", "lme-e47becba_abs", "lme-118b2229", "lme-6a1eabeb", "lme-gpt4_2655b836",
                           "lme-0a995998"}
    judged = probes["lme-0a995998"]  # scored by the judge grader alone: no pack-level number, never 0
    assert judged.scored and (judged.hit, judged.rr, judged.answer_ok, judged.leak_checked) == (None, None, None, False)
    assert judged.evidence_recall is not None
    recall = record.totals["recall"].all  # the abstention and the judged question are in no pack-level n
    assert recall.pack_hit.n == recall.extractive.n == 4 and recall.scored == 6
    assert probes["lme-e47becba_abs"].invented is None and probes["lme-e47becba_abs"].answer_ok is None
    assert probes["lme-e47becba"].hit is True  # the evidence turn reaches the pack


def test_locomo_import_prints_the_category_map_and_maps_category_5_to_abstention(tmp_path, capsys):
    src = write(tmp_path / "locomo10.json", locomo_records())
    assert cli(["import", "locomo", str(src), "-o", str(tmp_path / "lc")]) == 0
    printed = capsys.readouterr().out
    assert "1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial" in printed
    suite = _load(tmp_path / "lc" / "suite.yaml")
    assert suite["x-category_map"] == {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
    assert {u["question_id"] for u in suite["x-unmapped"]} == {"conv-26-q8"}
    conv = _load(tmp_path / "lc" / "scenarios" / "locomo-conv-26.yaml")
    assert [t["id"] for t in conv["threads"]] == ["session-1", "session-2"] and [t["day"] for t in conv["threads"]] == [108, 125]  # from conv-30's 20 January
    first = conv["threads"][0]["exchanges"]
    assert first[0] == {"user": "Caroline: Hey Mel! I went to an LGBTQ support group yesterday.",
                        "reply": "Melanie: That's great, Caroline! I painted a sunrise last week.", "ids": ["D1:1", "D1:2"]}
    assert first[1]["user"] == "Caroline: Look at this! [shares a photo: a photo of a rainbow flag]"
    assert first[1]["x-photos"][0]["query"] == "rainbow flag parade"
    probes = {p["id"]: p for p in conv["probes"]}
    assert probes["conv-26-q6"]["abstain"] is True and probes["conv-26-q6"]["answer_only"] is True
    assert "forbid" not in probes["conv-26-q6"] and probes["conv-26-q6"]["x-adversarial_answer"] == "a sunrise"
    assert probes["conv-26-q7"]["abstain"] is True and probes["conv-26-q6"]["groups"] == ["abstention"]
    assert probes["conv-26-q4"]["expect"] == ["adoption"] and probes["conv-26-q4"]["gold"].startswith("adoption;")
    assert {p["asked_at"] for p in probes.values()} == {"2023-05-25T10:04"}  # the last session (session_3 is empty)
    assert probes["conv-26-q3"]["category"] == "multi-hop" and probes["conv-26-q3"]["evidence"] == ["D1:2", "D2:1"]
    assert probes["conv-26-q5"]["expect"] == ["1"]
    assert cli(["validate", str(tmp_path / "lc" / "suite.yaml")]) == 0
    assert cli(["run", str(tmp_path / "lc" / "suite.yaml"), "--out", str(tmp_path / "run"), "--quiet"]) == 0


def test_only_limit_and_sample_select_questions(tmp_path, capsys):
    src = write(tmp_path / "locomo10.json", locomo_records())
    assert cli(["import", "locomo", str(src), "-o", str(tmp_path / "a"), "--only", "conv-30"]) == 0
    assert [p.name for p in (tmp_path / "a" / "scenarios").iterdir()] == ["locomo-conv-30.yaml"]
    assert cli(["import", "locomo", str(src), "-o", str(tmp_path / "b"), "--limit", "2"]) == 0
    assert [p["id"] for p in _load(tmp_path / "b" / "scenarios" / "locomo-conv-26.yaml")["probes"]] == ["conv-26-q1", "conv-26-q2"]
    for name in ("c", "d"):
        assert cli(["import", "locomo", str(src), "-o", str(tmp_path / name), "--sample", "3", "--seed", "5"]) == 0
    assert (tmp_path / "c" / "suite.yaml").read_text() == (tmp_path / "d" / "suite.yaml").read_text()
    assert _load(tmp_path / "c" / "suite.yaml")["x-dataset"]["selection"] == {"sample": 3, "seed": 5}


@pytest.mark.parametrize("args, words", [
    (["--sha256", "ab" * 32], "field 'sha256'"),
    (["--variant", "m"], "field 'variant'"),
])
def test_a_wrong_file_is_refused_before_anything_is_written(tmp_path, capsys, args, words):
    src = write(tmp_path / "longmemeval_s.json", lme_records())
    assert cli(["import", "longmemeval", str(src), "-o", str(tmp_path / "out"), *args]) == 2
    assert words in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_a_truncated_file_is_refused_with_exit_2(tmp_path, capsys):
    src = tmp_path / "longmemeval_s.json"
    src.write_text(json.dumps(lme_records())[:-300])
    assert cli(["import", "longmemeval", str(src), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{src}: truncated" in err and not (tmp_path / "out").exists()


def test_importing_into_a_directory_with_scenarios_is_refused(lme_suite, tmp_path, capsys):
    out, _ = lme_suite
    src = write(tmp_path / "longmemeval_s.json", lme_records())
    assert cli(["import", "longmemeval", str(src), "-o", str(out)]) == 2
    assert "already holds scenario files" in capsys.readouterr().err


def test_evidence_recall_is_read_off_a_real_pack_by_dia_id(tmp_path, capsys):
    src = write(tmp_path / "locomo10.json", locomo_records())
    assert cli(["import", "locomo", str(src), "-o", str(tmp_path / "lc"), "--only", "conv-26"]) == 0
    assert cli(["run", str(tmp_path / "lc" / "suite.yaml"), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    sample = next(iter(iter_units(scan("locomo", src))))
    texts = turn_texts(sample)
    probes = {p.id: p for p in read_run(str(tmp_path / "run" / "run.json")).probes if p.phase == "recall"}
    found = retrieved_ids(texts, probes["conv-26-q2"].pack or "")  # "What did Melanie paint?", evidence D1:2
    assert "D1:2" in found and evidence_recall(["D1:2"], found) == 1.0
    assert evidence_recall(["D1:2", "D2:1"], retrieved_ids(texts, "# Memory\n")) == 0.0
