"""Which model a benchmark judge asks, how it samples, and what the answerer is told of the date;
and the self-consistency arithmetic of --judge-repeats."""

from __future__ import annotations

import pytest

from memeval.llm.answer import spoken_date
from memeval.llm.bench_judge import judge_settings
from memeval.llm.consistency import consistency, fleiss_kappa, repeat_salt
from memeval.llm.settings import load_prompt, resolve

LOCAL = {"EVAL_LLM_URL": "http://127.0.0.1:9/v1"}


def test_the_benchmark_judge_asks_the_official_model_unless_one_is_named() -> None:
    lme = judge_settings(resolve({}, LOCAL), "longmemeval-judge")
    assert (lme.model, lme.temperature, lme.max_tokens, lme.json_reply) == ("gpt-4o-2024-08-06", 0.0, 10, False)
    assert lme.prompt.render({"prompt": "Is it? Answer yes or no only."}) == ("", "Is it? Answer yes or no only.")
    j = judge_settings(resolve({"model": "answerer-model"}, LOCAL), "mem0-j")
    assert (j.model, j.max_tokens, j.json_reply) == ("gpt-4o-mini", None, True)  # never the answerer's model
    assert j.sampling() == {"temperature": 0.0, "max_tokens": None, "json_reply": True}
    on_openrouter = judge_settings(resolve({}, {"EVAL_LLM_KEY": "k"}), "mem0-j")
    assert on_openrouter.model == "openai/gpt-4o-mini"
    named = resolve({"judge": {"model": "suite-judge"}}, LOCAL)
    assert judge_settings(named, "mem0-j").model == "suite-judge"
    assert judge_settings(resolve({"judge": {"model": "suite-judge"}}, {**LOCAL, "EVAL_JUDGE_MODEL": "env-judge"}),
                          "longmemeval-judge").model == "env-judge"
    judged_elsewhere = resolve({"judge": {"url": "http://127.0.0.1:8/v1"}}, LOCAL)
    assert judge_settings(judged_elsewhere, "mem0-j").endpoint == "http://127.0.0.1:8/v1"


def test_the_answerer_is_told_the_asking_time_and_an_undated_prompt_is_unchanged() -> None:
    assert spoken_date("2023-05-30T23:17") == "Tuesday, 30 May 2023, 23:17"
    assert resolve({}, LOCAL, dated=True).answer.prompt.name == "answer-dated-v1"
    assert resolve({}, LOCAL).answer.prompt.name == "answer-v1"
    assert resolve({"prompt": "answer-v1"}, LOCAL, dated=True).answer.prompt.name == "answer-v1"
    dated, plain = load_prompt("answer-dated-v1"), load_prompt("answer-v1")
    job = {"pack": "- [2023-05-20 02:21] user: I graduated.", "question": "What degree?"}
    assert dated.render(job) == plain.render(job)
    _, user = dated.render({**job, "asked_at": spoken_date("2023-05-30T23:17")})
    assert user.endswith("\n\nToday is Tuesday, 30 May 2023, 23:17.\n\nQuestion: What degree?")


def test_fleiss_kappa_on_a_worked_example() -> None:
    # two raters, three items: agree yes, agree no, split. P-bar = 2/3, chance = 1/2, kappa = 1/3
    assert fleiss_kappa([[True, True], [False, False], [True, False]]) == pytest.approx(0.3333)
    assert fleiss_kappa([[True, True], [False, False]]) == 1.0
    assert fleiss_kappa([[True, True], [True, True]]) is None  # every verdict the same: undefined, not 1
    assert fleiss_kappa([]) is None


def test_consistency_counts_unanimous_answers_with_a_verdict_every_time() -> None:
    found = consistency([[True, True, True], [True, False, True], [None, True, True], [False, False, False]])
    assert found is not None and (found.repeats, found.unanimous, found.n) == (3, 2, 3)
    assert consistency([[True], [False]]) is None  # judged once: nothing to measure
    assert repeat_salt("s", 1) == "s" and repeat_salt("s", 2) != repeat_salt("s", 3) != "s"
