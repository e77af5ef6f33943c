"""LongMemEval's judge rules and mem0's J: which prompt, what it says, how the reply is read."""

import hashlib

import pytest

from memeval.benchmarks.judging import template_file
from memeval.benchmarks.locomo.judge import LOCOMO_J, j_applies, j_request, j_verdict
from memeval.benchmarks.locomo.judge import shipped as shipped_template
from memeval.benchmarks.longmemeval.judge import LONGMEMEVAL_JUDGE, lme_prompt_key, lme_request, lme_templates, lme_verdict
from memeval.errors import UsageError


def _flat(request):
    return " ".join(request.prompt.split())


def test_abstention_is_chosen_before_the_type():
    assert lme_prompt_key("temporal-reasoning", True) == "abstention"
    assert lme_prompt_key("temporal-reasoning", False) == "temporal-reasoning"
    templates = lme_templates()
    shared = {templates[t].sha256 for t in ("multi-session", "single-session-assistant", "single-session-user")}
    assert len(shared) == 1 and templates["multi-session"].name == "lme-answer"  # upstream's one prompt for the three
    with pytest.raises(UsageError, match="unknown LongMemEval question type"):
        lme_prompt_key("single_hop", False)
    # a temporal _abs question: the abstention prompt, not the off-by-one rule
    abs_temporal = lme_request(templates, "temporal-reasoning", True, "How many days?", "Never said", "unknown")
    assert abs_temporal.template == "lme-abstention" and "off by exactly one" not in " ".join(abs_temporal.prompt.split())


def test_each_type_gets_its_rule_and_every_prompt_ends_yes_or_no():
    templates = lme_templates()
    assert all(t.text.rstrip().endswith("Answer yes or no only.") for t in templates.values())
    temporal = lme_request(templates, "temporal-reasoning", False, "How many days between?", "18 days", "19 days")
    assert "off by exactly one" in _flat(temporal) and "19 days for a correct answer of 18 days is a yes" in _flat(temporal)
    update = lme_request(templates, "knowledge-update", False, "Where is the key?", "under the pot", "It was in the mailbox, now under the pot")
    assert "may also mention what was true before" in _flat(update)
    pref = lme_request(templates, "single-session-preference", False, "Suggest an activity", "hiking rubric", "Go hiking")
    assert "Rubric" in pref.prompt and "need not cover every point" in _flat(pref)
    abstain = lme_request(templates, "single-session-user", True, "What degree in music?", "Never said", "I don't know")
    assert "unanswerable" in abstain.prompt and "Never said" in abstain.prompt
    assert (temporal.temperature, temporal.max_tokens, temporal.model) == (0.0, 10, "gpt-4o-2024-08-06")
    assert temporal.template_sha256 == hashlib.sha256(templates["temporal-reasoning"].text.encode()).hexdigest()


@pytest.mark.parametrize("reply, verdict", [
    ("Yes", True), ("yes.", True), ("YES, the response is correct", True), ("No", False), ("no.", False),
    ("The eyes have it", True),  # upstream's substring test, reproduced as is
    ("", None), ("  \n", None),  # an empty reply is no verdict, never a wrong answer
])
def test_the_longmemeval_verdict_is_yes_anywhere_in_the_lowercased_reply(reply, verdict):
    assert lme_verdict(reply) is verdict


@pytest.mark.parametrize("reply, verdict", [
    ('The answer names the same place. {"label": "CORRECT"}', True),
    ('{"label": "INCORRECT"}', False),  # never a substring match of CORRECT
    ('{"label": "WRONG"}', False),
    ('{"label": "correct"}', False),  # upstream compares exactly
    ("CORRECT", None),  # no JSON object: unjudged, not wrong
    ('{"verdict": "CORRECT"}', None),
])
def test_mem0_j_reads_the_json_label_exactly(reply, verdict):
    assert j_verdict(reply) is verdict


def test_mem0_j_skips_category_5_and_asks_for_json():
    assert [j_applies(c) for c in (1, 2, 3, 4, 5)] == [True, True, True, True, False]
    request = j_request(shipped_template("mem0-j"), "What did Melanie paint?", "a sunrise", "She painted a sunrise")
    assert request.json_reply and request.model == "gpt-4o-mini" and request.temperature == 0.0
    assert "a sunrise" in request.prompt and "generously" in request.prompt.lower()
    assert request.grader == LOCOMO_J.name != LONGMEMEVAL_JUDGE.name


def test_a_user_template_replaces_a_shipped_one_and_is_recorded_by_sha256(tmp_path):
    upstream_style = tmp_path / "temporal.txt"
    upstream_style.write_text("Question: {}\n\nCorrect Answer: {}\n\nModel Response: {}\n\nAnswer yes or no only.")
    templates = lme_templates({"temporal-reasoning": upstream_style})
    request = lme_request(templates, "temporal-reasoning", False, "How long?", "18 days", "19 days")
    assert request.prompt.startswith("Question: How long?\n\nCorrect Answer: 18 days\n\nModel Response: 19 days")
    assert request.template_sha256 == hashlib.sha256(upstream_style.read_bytes()).hexdigest()
    assert templates["multi-session"].source == "shipped" and templates["temporal-reasoning"].source == str(upstream_style)
    mem0_style = tmp_path / "j.txt"
    mem0_style.write_text("Q {question} G {gold_answer} A {generated_answer} {{\"label\"}}")
    assert j_request(template_file(mem0_style), "q", "g", "a").prompt == 'Q q G g A a {"label"}'


def test_bad_templates_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="unknown LongMemEval prompt key"):
        lme_templates({"temporal": tmp_path / "x.txt"})
    broken = tmp_path / "broken.txt"
    broken.write_text("Question: {query}")
    with pytest.raises(UsageError, match="cannot be filled"):
        template_file(broken).render("q", "a", "r")
    with pytest.raises(UsageError, match="no shipped judge prompt"):
        shipped_template("nope")
