"""Issue 30, point 4: answers say who produced them. The answerer and judge sections of run.md
and run.html, and the summary on stderr, name the model that served the answers — the mock
inference server as the mock, with the model asked for beside it — also when every answer came
from the cache (the name is kept with the answer when it is first produced)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memeval.llm.client import Reply
from memeval.report.served import answered_by
from memeval.record import Answerer
from tests.comparison.factory import answerer
from tests.llm.conftest import MINI, Mock, memeval

ASKED = "openai/gpt-4.1-mini"
MOCK_WORDS = f"the mock model mock-chat (asked for {ASKED})"


def _run(mock: Mock, home: Path, out: str) -> tuple[dict, str, str]:
    env = {"EVAL_LLM_URL": mock.url, "EVAL_LLM_KEY": "", "OPENROUTER_API_KEY": "", "EVAL_LLM_MODEL": ASKED,
           "HOME": str(home), "MEMEVAL_CACHE_DIR": str(home / "cache")}
    proc = memeval("run", MINI, "--llm", "--judge", "--out", str(home / out), env=env)
    assert proc.returncode == 0, proc.stderr
    folder = home / out
    return json.loads((folder / "run.json").read_text()), (folder / "run.md").read_text(), proc.stderr


@pytest.mark.slow
def test_a_cached_rerun_still_names_the_mock_that_produced_its_answers(mock: Mock, tmp_path: Path):
    first, _, _ = _run(mock, tmp_path, "first")
    calls = mock.chat_calls()
    again, report, stderr = _run(mock, tmp_path, "again")
    assert mock.chat_calls() == calls  # every answer and verdict of the rerun came from the cache
    a = again["answerer"]
    assert a["incurred"]["calls"] == 0 and a["cache"]["hits"] + a["cache"]["reused"] == a["answered"] == 15
    assert a["incurred"]["served"] == ["mock-chat"] == first["answerer"]["incurred"]["served"]
    assert a["judge"]["incurred"]["served"] == ["mock-chat"]
    section = report.split("## Answerer")[1]
    assert f"| Model | {MOCK_WORDS} at " in section and f"| Judge | {MOCK_WORDS} at " in section
    assert f"`{ASKED}` at" not in report
    assert f"answered by {MOCK_WORDS}" in stderr
    html = (tmp_path / "again" / "run.html").read_text()
    assert "the mock model mock-chat (asked for openai/gpt-4.1-mini)" in html


def test_a_cache_entry_keeps_the_name_of_the_model_that_served_it():
    reply = Reply("Kyoto", 10, 2, 0.0, served="mock-chat")
    assert Reply.from_entry(reply.to_entry()) == Reply("Kyoto", 10, 2, 0.0, cached=True, served="mock-chat")
    older = {k: v for k, v in reply.to_entry().items() if k != "served"}
    assert Reply.from_entry(older).served is None


def _served(names: tuple[str, ...] | None, model: str = ASKED) -> Answerer:
    a = answerer(3, 30, 0.0)
    return a.__class__(**{**vars(a), "model": model, "incurred": a.incurred.__class__(
        **{**vars(a.incurred), "served": names})})


def test_the_words_for_who_answered():
    assert answered_by(_served(("mock-chat",))) == MOCK_WORDS
    assert answered_by(_served((ASKED,))) == ASKED
    assert answered_by(_served(("openai/gpt-4.1-mini-2025",))) == f"{ASKED} (served as openai/gpt-4.1-mini-2025)"
    assert answered_by(_served(None)) == f"{ASKED} (asked for; the endpoint did not name the model that served)"
