"""The conformance kit as pytest tests, for adapter authors.

Subclass :class:`EngineConformance` in a test module and give it an ``engine`` fixture; pytest
then runs one test per contract of :data:`memeval.engines.conformance.CONTRACTS`
(``test_contract[<name>]``), failing with the contract's one-line reason and skipping the ones
about a capability the engine does not implement::

    import pytest
    from memeval.engines.pytest_plugin import EngineConformance
    from my_engine import MyEngine

    class TestMyEngine(EngineConformance):
        settle_s = 5.0  # how long a write may take to be listed

        @pytest.fixture
        def engine(self):
            engine = MyEngine()
            yield engine
            engine.close()

The class name must not start with ``Test`` so that pytest collects only the subclasses. An
unreachable engine fails every test with the reason.
"""

from __future__ import annotations

import pytest

from memeval.engines.base import Engine
from memeval.engines.conformance import CONTRACTS, DEFAULT_SETTLE_S, Contract, check, reach


class EngineConformance:
    """One test per engine contract against the ``engine`` fixture a subclass provides."""

    settle_s = DEFAULT_SETTLE_S

    @pytest.fixture
    def engine(self) -> Engine:
        """The engine under test; a subclass must override this fixture."""
        raise NotImplementedError("define an engine fixture in your EngineConformance subclass")

    @pytest.mark.parametrize("contract", CONTRACTS, ids=[c.name for c in CONTRACTS])
    def test_contract(self, engine: Engine, contract: Contract) -> None:
        """The contract holds (or is skipped for a capability the engine lacks)."""
        reach(engine)
        result = check(engine, contract, self.settle_s)
        if result.status == "skip":
            pytest.skip(result.reason)
        assert result.ok, result.line()
