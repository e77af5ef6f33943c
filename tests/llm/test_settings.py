"""Answerer settings, prompt templates and cache keys: pure functions, no server."""

from __future__ import annotations

import pytest

from memeval.errors import UsageError
from memeval.llm.cache import cache_key
from memeval.llm.settings import DEFAULT_MODEL, DEFAULT_URL, LOCAL_KEY, Price, load_prompt, public_url, resolve
from tests.llm.conftest import SECRET


def test_environment_overrides_yaml_and_the_key_stays_hidden() -> None:
    block = {"url": "http://127.0.0.1:9/v1", "model": "yaml-model", "max_tokens": 50, "x-note": "ignored",
             "prices": {"env-model": {"input_per_mtok": 2.0, "output_per_mtok": 8.0}}}
    env = {"EVAL_LLM_MODEL": "env-model", "OPENROUTER_API_KEY": SECRET, "MEMEVAL_KEY_HOSTS": "127.0.0.1"}
    s = resolve(block, env).answer
    assert (s.url, s.model, s.max_tokens, s.temperature, s.key) == ("http://127.0.0.1:9/v1", "env-model", 50, 0.0, SECRET)
    assert s.price() == Price(2.0, 8.0) and s.price().cost(1_000_000, 500_000) == pytest.approx(6.0)
    assert SECRET not in repr(s) and SECRET not in str(s.to_json())
    assert resolve({}, {"EVAL_LLM_KEY": "k2", "OPENROUTER_API_KEY": SECRET}).answer.key == "k2"


def test_a_key_goes_only_to_the_endpoint_the_user_chose() -> None:
    env = {"OPENROUTER_API_KEY": SECRET}
    with pytest.raises(UsageError, match="goes only to EVAL_LLM_URL or a host listed in MEMEVAL_KEY_HOSTS") as err:
        resolve({"url": "https://collector.example/v1"}, env)
    assert SECRET not in str(err.value)
    assert resolve({"url": "http://127.0.0.1:9/v1"}, env).answer.key == LOCAL_KEY  # a suite's loopback URL: no key
    judged = resolve({"judge": {"url": "https://judge.example/v1"}}, {**env, "MEMEVAL_KEY_HOSTS": "judge.example"})
    assert judged.judge is not None and judged.judge.key == SECRET and judged.answer.key == SECRET
    chosen = {**env, "EVAL_LLM_URL": "https://mine.example/v1"}
    assert resolve({"url": "https://collector.example/v1"}, chosen).answer.key == SECRET  # the user's URL wins
    with pytest.raises(UsageError, match="judge.example"):
        resolve({"judge": {"url": "https://judge.example/v1"}}, chosen)


def test_defaults_and_keys() -> None:
    s = resolve({}, {"EVAL_LLM_KEY": SECRET}).answer
    assert (s.url, s.model, s.prompt.name, s.max_tokens, s.concurrency) == (DEFAULT_URL, DEFAULT_MODEL, "answer-v1", 120, 4)
    with pytest.raises(UsageError, match="no API key for https://openrouter.ai/api/v1"):
        resolve({}, {})
    assert resolve({}, {"EVAL_LLM_URL": "http://localhost:11434/v1"}).answer.key == LOCAL_KEY


def test_endpoint_is_recorded_without_credentials() -> None:
    assert public_url(f"https://user:{SECRET}@api.example.com:8443/v1/?key={SECRET}#x") == "https://api.example.com:8443/v1"


def test_prompts_are_versioned_files(tmp_path) -> None:
    assert load_prompt("judge-v1").name == "judge-v1"
    with pytest.raises(UsageError, match="did you mean 'answer-v1'"):
        load_prompt("answer-v2")
    mine = tmp_path / "terse-v1.j2"
    mine.write_text("{% block system %}Be terse.{% endblock %}{% block user %}{{ pack }}\nQ: {{ question }}{% endblock %}")
    prompt = load_prompt("terse-v1.j2", str(tmp_path))
    assert prompt.render({"pack": "- a", "question": "b?"}) == ("Be terse.", "- a\nQ: b?")
    mine.write_text("{{ pack }}")
    with pytest.raises(UsageError, match="needs a {% block system %}"):
        load_prompt("terse-v1.j2", str(tmp_path)).render({"pack": ""})


def test_every_part_of_the_cache_key_matters() -> None:
    base = ("http://h/v1", "m", "p" * 64, {"pack": "P", "question": "Q"}, {"temperature": 0.0, "max_tokens": 120}, "")
    variants = [
        ("http://other/v1", *base[1:]), (base[0], "m2", *base[2:]), (*base[:2], "q" * 64, *base[3:]),
        (*base[:3], {"pack": "P2", "question": "Q"}, *base[4:]), (*base[:3], {"pack": "P", "question": "Q2"}, *base[4:]),
        (*base[:4], {"temperature": 0.0, "max_tokens": 10}, ""), (*base[:5], "r1"),
    ]
    keys = {cache_key(*v) for v in variants}
    assert cache_key(*base) == cache_key(*base) and len(keys) == len(variants) and cache_key(*base) not in keys
