"""The one masking function and the secret-name rule (pure functions)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memeval import secrets
from memeval.secrets import has_credentials, is_secret, is_secret_name, mask, mask_json, remember

SCHEMAS = Path(secrets.__file__).parent / "spec" / "schemas"


@pytest.mark.parametrize("name", ["OPENROUTER_API_KEY", "CORTEX_LLM_APIKEY", "GH_TOKEN", "DB_PASS", "DB_PASSWORD",
                                  "SMTP_PASSWD", "AWS_CREDENTIALS", "CLIENT_SECRET", "key", "credential"])
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["PWD", "BYPASS", "KEYBOARD", "MONKEY_BUSINESS", "CORTEX_BITEMPORAL_MODE", "PATH"])
def test_names_that_are_not_secrets(name: str) -> None:
    assert not is_secret_name(name)


def test_a_url_with_user_info_is_a_secret_whatever_its_name() -> None:
    assert has_credentials("postgres://user:pw@db:5432/x") and is_secret("CORTEX_DATABASE_URL", "postgres://u:p@h/x")
    assert not is_secret("CORTEX_DATABASE_URL", "postgres://db:5432/x")


def test_mask_removes_known_values_user_info_and_bearer_tokens_everywhere() -> None:
    remember(["sk-remembered-canary-55"])
    text = "500 BAD_AUTH:Bearer sk-xyz-123456 at postgres://user:hunter22@db/x; echo sk-remembered-canary-55!"
    assert mask(text) == "500 BAD_AUTH:Bearer *** at postgres://***@db/x; echo ***!"
    assert mask_json({"a": ["sk-remembered-canary-55", 3], "sk-remembered-canary-55": None}) == {"a": ["***", 3], "***": None}


@pytest.mark.parametrize(("value", "whole"), [
    ({"a": "plain words", "b": [1, 2.5, None, True, {"c": "more"}]}, True),
    ({"text": "got sk-remembered-canary-55 back"}, False),
    ({"sk-remembered-canary-55": 1}, False),
    ({"note": "see https://user:pw@host/x"}, False),
    ({"note": "see https://host/x"}, False),  # no user info, but the quick check cannot tell
    ({"auth": "BEARER abcdefgh"}, False),
    ({"auth": "bearer\tabcdefgh"}, False),  # JSON writes the tab as \t: the quick check must still see it
    (["line\nsk-remembered-canary-55"], False),
])
def test_mask_json_masks_exactly_what_masking_each_string_would(monkeypatch: pytest.MonkeyPatch, value: object,
                                                                  whole: bool) -> None:
    monkeypatch.setattr(secrets, "_known", set(secrets._known))
    remember(["sk-remembered-canary-55"])
    assert mask_json(value) == secrets._mask_json(value, secrets._known_values())
    assert (mask_json(value) is value) == whole  # nothing to mask: the value itself, not a copy


def test_a_secret_json_would_escape_is_looked_for_string_by_string(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secrets, "_known", set(secrets._known))
    remember(['quote"canary-9'])
    value = {"a": 'got quote"canary-9', "b": "plain"}
    assert mask_json(value) == {"a": "got ***", "b": "plain"}


def test_values_from_the_environment_are_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secrets, "_from_env", False)
    monkeypatch.setenv("SOME_SERVICE_APIKEY", "canary-from-env-77")
    assert mask("got canary-from-env-77") == "got ***"


def test_the_engine_schema_refuses_the_same_names() -> None:
    schema = json.loads((SCHEMAS / "engine.schema.json").read_text())
    assert schema["properties"]["settings"]["propertyNames"]["not"]["pattern"] == secrets.SECRET_NAME.pattern
