"""LongMemEval and LoCoMo files to typed values: every quirk of the real files, and a one-line
error naming the file and the field for every wrong one."""

import copy
from datetime import datetime

import pytest

from memeval.benchmarks.source import Selection, iter_units, scan, select
from memeval.errors import UsageError
from tests.datasets.files import lme_records, locomo_records, write


@pytest.fixture
def lme_file(tmp_path):
    return write(tmp_path / "longmemeval_s.json", lme_records())


@pytest.fixture
def locomo_file(tmp_path):
    return write(tmp_path / "locomo10.json", locomo_records())


def test_longmemeval_instances_keep_every_field_with_the_quirks_read(lme_file):
    dataset = scan("longmemeval", lme_file)
    assert dataset.variant == "s" and dataset.questions == 6 and len(dataset.sha256) == 64
    first, bikes, *_, abstain, _ = list(iter_units(dataset))
    assert [s.id for s in first.sessions] == ["answer_280352e9", "sharegpt_a1_0", "ultrachat_9_1"]  # by haystack_dates
    assert first.sessions[0].date == datetime(2023, 5, 20, 2, 21) and first.sessions[0].date_text == "2023/05/20 (Sat) 02:21"
    assert [t.has_answer for t in first.sessions[0].turns] == [True, False]
    assert first.asked_at == datetime(2023, 5, 30, 23, 17) and not first.abstention
    assert bikes.answer == "3"  # an integer answer becomes its text
    assert abstain.abstention and abstain.question_type == "single-session-user"
    assert dataset.units[0].earliest == datetime(2023, 5, 20, 2, 21)


@pytest.mark.parametrize("field, value, words", [
    ("question_date", "2023-05-30 23:17", "field 'question_date': expected a date like"),
    ("question_type", "single_hop", "field 'question_type': unknown type 'single_hop'"),
    ("answer", ["a"], "field 'answer': expected a string or an integer"),
    ("haystack_dates", ["2023/05/22 (Mon) 10:04"], "field 'haystack_sessions': 3 sessions but 3 haystack_session_ids and 1"),
    ("question", None, "field 'question': expected a non-empty string, got null"),
])
def test_a_wrong_longmemeval_field_is_named(tmp_path, field, value, words):
    records = lme_records()
    records[0][field] = value
    path = write(tmp_path / "longmemeval_s.json", records)
    with pytest.raises(UsageError) as err:
        scan("longmemeval", path)
    message = str(err.value)
    assert message.startswith(f"{path}: instance 1 (question_id 'e47becba'): ") and words in message and "\n" not in message


def test_a_missing_field_and_a_bad_turn_are_named(tmp_path):
    records = lme_records()
    del records[1]["answer_session_ids"]
    records[2]["haystack_sessions"][0][0]["role"] = "system"
    path = write(tmp_path / "longmemeval_s.json", records)
    with pytest.raises(UsageError, match=r"instance 2 \(question_id '118b2229'\): field 'answer_session_ids': missing"):
        scan("longmemeval", path)
    del records[1]
    with pytest.raises(UsageError, match=r"field 'haystack_sessions\[0\]\[0\]\.role': expected 'user' or 'assistant'"):
        scan("longmemeval", write(path, records))


def test_sha256_and_variant_are_verified(lme_file, tmp_path):
    real = scan("longmemeval", lme_file).sha256
    assert scan("longmemeval", lme_file, sha256=real.upper()).sha256 == real
    with pytest.raises(UsageError, match=f"field 'sha256': the file's sha256 is {real}, expected 00"):
        scan("longmemeval", lme_file, sha256="00" * 32)
    with pytest.raises(UsageError, match="named as variant 's' but 'm' was asked for"):
        scan("longmemeval", lme_file, variant="m")
    renamed = write(tmp_path / "mine.json", lme_records())
    with pytest.raises(UsageError, match="cannot tell the variant from the file name; pass --variant"):
        scan("longmemeval", renamed)
    with pytest.raises(UsageError, match="variant 'oracle' was expected, but instance 1 .* looks like 's'"):
        scan("longmemeval", renamed, variant="oracle")
    assert scan("longmemeval", renamed, variant="s_cleaned").variant == "s_cleaned"


def test_an_oracle_file_is_recognised_by_its_content(tmp_path):
    records = lme_records()
    for record in records:
        record["answer_session_ids"] = list(record["haystack_session_ids"])
    path = write(tmp_path / "longmemeval_oracle.json", records)
    assert scan("longmemeval", path).variant == "oracle"
    with pytest.raises(UsageError, match="looks like 'oracle'"):
        scan("longmemeval", write(tmp_path / "longmemeval_s.json", records))


def test_a_locomo_file_is_not_a_longmemeval_file(locomo_file, tmp_path):
    with pytest.raises(UsageError, match="instance 1: field 'question_id': missing"):
        scan("longmemeval", locomo_file, variant="s")
    with pytest.raises(UsageError, match="sample 1: field 'sample_id': missing"):
        scan("locomo", write(tmp_path / "longmemeval_s.json", lme_records()))


def test_duplicate_question_ids_are_refused(tmp_path):
    records = lme_records()
    records.append(copy.deepcopy(records[0]))
    with pytest.raises(UsageError, match="field 'question_id': 'e47becba' occurs more than once"):
        scan("longmemeval", write(tmp_path / "longmemeval_s.json", records))


def test_locomo_quirks_are_read(locomo_file):
    dataset = scan("locomo", locomo_file)
    assert dataset.variant == "locomo10" and dataset.questions == 9
    sample = next(iter(iter_units(dataset)))
    assert [s.number for s in sample.sessions] == [1, 2]  # the empty session_3 is skipped
    assert sample.sessions[0].date == datetime(2023, 5, 8, 13, 56)
    photo = sample.sessions[0].turns[2]
    assert (photo.img_url, photo.blip_caption, photo.query) == (
        "https://example.invalid/photo.jpg", "a photo of a rainbow flag", "rainbow flag parade")
    q = {x.id: x for x in sample.questions}
    assert q["conv-26-q5"].answer == "1"  # integer answer
    assert q["conv-26-q6"].category == 5 and q["conv-26-q6"].evidence == ("D1:2",)  # '5' and a string repr
    assert q["conv-26-q6"].answer is None and q["conv-26-q6"].adversarial_answer == "a sunrise"
    assert q["conv-26-q7"].evidence == () and q["conv-26-q8"].answer is None
    assert [x.category_name for x in sample.questions[:4]] == ["temporal", "single-hop", "multi-hop", "open-domain"]


@pytest.mark.parametrize("mutate, words", [
    (lambda r: r[0]["qa"][0].update(category=7), "field 'qa[0].category': expected one of 1-5, got 7"),
    (lambda r: r[0]["qa"][1].update(evidence="['D1:2'"), "field 'qa[1].evidence': cannot read"),
    (lambda r: r[0]["conversation"].update(session_2_date_time="May 25"), "field 'conversation.session_2_date_time'"),
    (lambda r: r[0]["conversation"].pop("session_1_date_time"), "'conversation.session_1_date_time': missing"),
    (lambda r: r[1]["conversation"].pop("speaker_b"), "sample 2 (sample_id 'conv-30'): field 'speaker_b': missing"),
])
def test_a_wrong_locomo_field_is_named(tmp_path, mutate, words):
    records = locomo_records()
    mutate(records)
    with pytest.raises(UsageError) as err:
        scan("locomo", write(tmp_path / "locomo10.json", records))
    assert words in str(err.value)


def test_selection_only_sample_and_limit(lme_file, locomo_file):
    dataset = scan("longmemeval", lme_file)
    assert select(dataset, Selection(only=("6a1eabeb", "e47becba"))) == ("e47becba", "6a1eabeb")
    assert select(dataset, Selection(limit=2)) == ("e47becba", "118b2229")
    picked = select(dataset, Selection(sample=3, seed=7))
    assert len(picked) == 3 and picked == select(dataset, Selection(sample=3, seed=7))
    assert {select(dataset, Selection(sample=3, seed=s)) for s in range(8)} != {picked}
    with pytest.raises(UsageError, match="--only names ids the file does not hold: nope"):
        select(dataset, Selection(only=("nope",)))
    with pytest.raises(UsageError, match="only 6 questions to sample from"):
        select(dataset, Selection(sample=7))
    conversations = scan("locomo", locomo_file)
    assert select(conversations, Selection(only=("conv-30", "conv-26-q2"))) == ("conv-26-q2", "conv-30-q1")
