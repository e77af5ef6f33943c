"""LoCoMo's official scoring pinned on worked examples from task_eval/evaluation.py's rules."""

import pytest

from memeval.benchmarks.locomo.graders import (LOCOMO_EVIDENCE_RECALL, LOCOMO_F1, locomo_score, multi_answer_f1,
                                               normalize_answer, says_not_there, token_f1, tokens)
from memeval.runner.evidence import evidence_recall, retrieved_ids


def test_the_normaliser_drops_commas_punctuation_articles_and_and():
    assert normalize_answer("The Dog, and a cat!") == "dog cat"
    assert normalize_answer("An apple; the pear.") == "apple pear"
    assert normalize_answer("Band, Sandy") == "band sandy"  # whole words only


def test_tokens_are_stemmed_with_nltk_porter_in_its_default_mode():
    assert tokens("running dogs") == ["run", "dog"]
    # nltk's default (NLTK_EXTENSIONS) mode, as upstream constructs PorterStemmer(); the original
    # 1980 algorithm would give "dy" and "ski"
    assert tokens("dying skies") == ["die", "sky"]


def test_token_f1_on_worked_examples():
    assert token_f1("He runs", "running") == pytest.approx(2 / 3)  # P 1/2, R 1
    assert token_f1("On 7 May, 2023", "7 May 2023") == pytest.approx(6 / 7)  # P 3/4, R 1
    assert token_f1("Paris", "paris.") == 1.0
    assert token_f1("Lisbon", "Paris") == 0.0
    assert token_f1("", "Paris") == 0.0


def test_category_1_is_the_mean_over_gold_parts_of_the_best_predicted_part():
    assert multi_answer_f1("running, hiking", "painting, running") == pytest.approx(0.5)
    assert multi_answer_f1("running and painting", "painting, running") == pytest.approx(2 / 3)  # each part F1 2/3
    assert locomo_score(1, "pottery, camping, painting", "painting, camping") == 1.0


def test_category_3_gold_is_cut_at_the_first_semicolon():
    assert locomo_score(3, "adoption", "adoption; she is researching agencies") == 1.0
    assert locomo_score(4, "adoption", "adoption; she is researching agencies") < 1.0


@pytest.mark.parametrize("output, score", [
    ("That is not mentioned in the conversation.", 1.0),
    ("No information available.", 1.0),
    ("NOT MENTIONED", 1.0),
    ("I don't know.", 0.0),  # upstream accepts only its two phrases
    ("A sunrise", 0.0),
])
def test_category_5_scores_the_two_upstream_phrases(output, score):
    assert locomo_score(5, output, None) == score
    assert says_not_there(output) is (score == 1.0)


def test_a_category_1_to_4_row_without_gold_is_unscored_not_zero():
    assert locomo_score(4, "anything", None) is None
    with pytest.raises(ValueError):
        locomo_score(6, "x", "y")


def test_evidence_recall_reads_dia_ids():
    assert evidence_recall(["D1:3", "D2:1"], {"D1:3", "D9:9"}) == 0.5
    assert evidence_recall(["D1:3"], []) == 0.0
    assert evidence_recall([], {"D1:3"}) is None
    turns = {"D1:1": "Caroline: I went to a support group.", "D1:2": "Melanie: I painted a sunrise."}
    pack = "# Memory\n- [2023-05-08 13:56] user: Caroline: I went to a support group.\n"
    assert retrieved_ids(turns, pack) == {"D1:1"}


def test_graders_record_their_upstream_rule():
    assert LOCOMO_F1.upstream_repo == "snap-research/locomo" and LOCOMO_F1.upstream_file == "task_eval/evaluation.py"
    assert len(LOCOMO_F1.upstream_commit) == 40 and LOCOMO_EVIDENCE_RECALL.to_json()["name"] == "locomo-evidence-recall"
