"""The answer cache counts what an earlier run (or repeat) wrote apart from what a run reuses of
its own: a prompt asked twice in one run is one model call and one in-run reuse, never a cache
hit; the next run with the same salt is served by the cache (cross-run hits), one with another
salt asks the model again. Against the mock inference server as a real process."""

from __future__ import annotations

import pytest

from memeval.llm.client import Batch
from memeval.llm.settings import CacheSettings, resolve
from tests.llm.conftest import SECRET, Mock, mock, mock_server  # noqa: F401 (fixtures)

JOBS = [{"pack": "- [2026-09-01 09:00] user: the deploy key rotates on Fridays", "question": q}
        for q in ("when does the deploy key rotate?", "who rotates it?", "when does the deploy key rotate?")]


def _batch(mock: Mock, folder: str, salt: str) -> Batch:  # noqa: F811
    settings = resolve({}, {"EVAL_LLM_URL": mock.url, "EVAL_LLM_KEY": SECRET})
    return Batch(settings.answer, CacheSettings(folder, salt))


def _ask(mock: Mock, folder: str, salt: str) -> dict[str, object]:  # noqa: F811
    batch = _batch(mock, folder, salt)
    try:
        replies = batch.run(JOBS)
    finally:
        batch.close()
    assert all(r is not None and not isinstance(r, str) for r in replies)
    return {**batch.summary()["cache"], "cached": [getattr(r, "cached") for r in replies]}


@pytest.mark.slow
def test_in_run_reuse_is_not_a_cache_hit_and_a_new_salt_asks_again(tmp_path, mock: Mock):  # noqa: F811
    folder = str(tmp_path / "cache")
    first = _ask(mock, folder, "repeat-1")
    assert (first["hits"], first["misses"], first["reused"]) == (0, 2, 1)
    assert first["cached"] == [False, False, True]  # the reused reply is marked cached: not freshly measured
    assert mock.chat_calls() == 2
    again = _ask(mock, folder, "repeat-1")  # an earlier run wrote these entries: cross-run hits
    assert (again["hits"], again["misses"], again["reused"]) == (2, 0, 1)
    assert mock.chat_calls() == 2
    other = _ask(mock, folder, "repeat-2")  # another repeat's salt: nothing is served from repeat 1
    assert (other["hits"], other["misses"], other["reused"]) == (0, 2, 1)
    assert mock.chat_calls() == 4
