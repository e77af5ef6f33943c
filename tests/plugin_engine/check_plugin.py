"""The conformance kit as pytest tests, as the dict-memory package's author would run it
(``python -m pytest check_plugin.py`` in an environment with memeval and this package)."""

import pytest

from dict_engine import create
from memeval.engines.pytest_plugin import EngineConformance


class TestDictEngine(EngineConformance):
    settle_s = 1.0

    @pytest.fixture
    def engine(self):
        engine = create({})
        yield engine
        engine.close()
