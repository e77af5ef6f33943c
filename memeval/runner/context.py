"""What a scenario's probes and synthesis may use: the engine, the scenario and its namespaces,
the suite's settings they read, and the timings they add to. Nothing else of the run."""

from __future__ import annotations

from dataclasses import dataclass

from memeval.agent.lifecycle import AgentMemory, Timings
from memeval.engines.base import Engine
from memeval.spec.model import Defaults, Policy, Scenario


@dataclass(frozen=True)
class ScenarioContext:
    """A running scenario as its probes and synthesis see it.

    ``replies`` is filled by the scenario's exchanges as they are played (the scripted reply of
    each (tenant, thread, exchange index)); probes only read it. ``probe_questions`` is the
    suite's ``agent.probe_questions``; ``written`` (per engine namespace, the item ids the
    scenario wrote) is where a kept probe question is noted so that cleanup forgets it.
    """

    engine: Engine
    capabilities: frozenset[str]
    scenario: Scenario
    namespaces: dict[str, str]
    defaults: Defaults
    policy: Policy
    probe_questions: str
    enrich_wait_s: float
    enrich_poll_s: float
    timings: Timings
    replies: dict[tuple[str, str, int], str]
    written: dict[str, set[str]]

    def memory(self, agent: str, tenant: str) -> AgentMemory:
        """The lifecycle for ``agent`` over scenario tenant ``tenant``."""
        return AgentMemory(self.engine, self.capabilities, self.namespaces[tenant], agent, self.policy, self.timings,
                           tenant_name=tenant)
