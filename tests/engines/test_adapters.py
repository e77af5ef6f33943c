"""How adapters are found and built: an entry point names an Adapter, the engine it builds has
the core methods, capabilities come from the protocols it implements, and the URL variable of
an engine behind a server is part of the declaration."""

from __future__ import annotations

import json
from importlib.metadata import EntryPoint
from typing import Any

import pytest

import memeval.engines
from memeval.engines import GROUP, create_engine, load_adapter
from memeval.engines.base import PROTOCOLS, Adapter, Capability, capabilities_of
from memeval.engines.reference.engine import ReferenceEngine
from memeval.engines.server import adapter_url_env
from memeval.errors import UsageError


class Pageless:
    """Everything of the core but ``page`` (it still has the old ``list``)."""

    def info(self) -> None: ...
    def write(self, item: Any) -> None: ...
    def list(self, tenant: str) -> None: ...
    def recall(self, request: Any) -> None: ...
    def forget(self, tenant: str, ids: Any) -> None: ...
    def close(self) -> None: ...


def old_style_factory(settings: Any) -> ReferenceEngine:
    return ReferenceEngine(None, 0.45)


PAGELESS = Adapter(lambda settings: Pageless())  # type: ignore[arg-type, return-value]


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> dict[str, EntryPoint]:
    """The real adapters plus two made-up ones pointing into this module."""
    found = dict(memeval.engines.adapters())
    for name, target in (("old-style", "old_style_factory"), ("pageless", "PAGELESS")):
        found[name] = EntryPoint(name, f"{__name__}:{target}", GROUP)
    monkeypatch.setattr(memeval.engines, "adapters", lambda: found)
    return found


def test_an_entry_point_must_name_an_adapter(installed: dict[str, EntryPoint]) -> None:
    with pytest.raises(UsageError, match=r"names a function, not a memeval.engines.base.Adapter"):
        load_adapter("old-style")


def test_an_engine_without_a_core_method_is_refused_when_built(installed: dict[str, EntryPoint]) -> None:
    with pytest.raises(UsageError, match=r"built a Pageless without page: not a memeval Engine"):
        create_engine("pageless", {})


def test_an_unknown_adapter_is_a_usage_error_with_a_suggestion() -> None:
    with pytest.raises(UsageError, match=r"unknown engine adapter 'refrence'.*did you mean 'reference'"):
        load_adapter("refrence")


def test_the_url_variable_is_declared_by_the_adapters_behind_a_server() -> None:
    assert load_adapter("cortex").url_env == "CORTEX_DB_URL"
    assert adapter_url_env("tinyhumans") == "TINYHUMANS_API_URL"
    assert adapter_url_env("reference") is None and adapter_url_env("no-such-adapter") is None


def test_capabilities_are_the_protocols_implemented_and_serialise_as_plain_sorted_strings() -> None:
    engine = create_engine("reference", {"embedder": "none"})
    caps = capabilities_of(engine)
    assert caps == {Capability.FORGET} | {c for c, proto in PROTOCOLS.items() if isinstance(engine, proto)}
    assert "erase" in caps and "answer" not in caps  # the string checks of the run keep working
    listed = engine.info().to_json()["capabilities"]
    assert all(type(c) is str for c in listed) and listed == sorted(listed)
    assert json.dumps(listed) == '["beliefs", "erase", "forget", "inspect"]'
    assert set(PROTOCOLS) == set(Capability) - {Capability.FORGET}
