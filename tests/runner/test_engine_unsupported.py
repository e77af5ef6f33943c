"""run.json says which capabilities the run would have used that the engine lacks, and what each
cost (probes made unsupported, KPIs left unmeasured); run.md shows it."""

from __future__ import annotations

from memeval.engines.base import EngineInfo
from memeval.record import MissingCapability
from memeval.record.codec import from_json
from memeval.record import RunRecord
from memeval.report.render import render
from memeval.runner.options import RunOptions
from memeval.runner.suite import run_suite
from memeval.spec.engine_def import resolve_engine
from memeval.spec.load import load_suite
from tests.conftest import FIXTURES


class CannotForget:
    """The reference engine with ``forget`` neither declared nor offered."""

    def __init__(self) -> None:
        self.inner = resolve_engine("reference-bm25").create()

    def __getattr__(self, name: str) -> object:
        if name == "forget":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def info(self) -> EngineInfo:
        info = self.inner.info()
        return EngineInfo(**{**vars(info), "capabilities": tuple(c for c in info.capabilities if c != "forget")})

    def forget(self, tenant: str, ids: tuple[str, ...]) -> int:  # the core protocol still has it: refuse
        raise AssertionError("forget called on an engine that does not declare it")


def test_the_record_lists_each_missing_capability_with_its_cost() -> None:
    suite = load_suite(f"{FIXTURES}/mini.yaml")
    full = run_suite(suite, resolve_engine("reference-bm25").create(), RunOptions())
    lacked = {m.capability: m for m in full.engine_unsupported or ()}
    assert "forget" not in lacked and "beliefs" not in lacked
    assert lacked["usage"] == MissingCapability("usage", 0, ("engine models $", "engine model calls",
                                                             "engine model tokens"))
    data = full.to_json()
    assert data["engine_unsupported"][0].keys() == {"capability", "probes", "kpis"}
    assert from_json(RunRecord, data, "run").engine_unsupported == full.engine_unsupported


def test_probes_an_engine_cannot_serve_are_counted_under_the_capability() -> None:
    suite = load_suite(f"{FIXTURES}/mini.yaml")
    record = run_suite(suite, CannotForget(), RunOptions())  # type: ignore[arg-type]
    forget = next(m for m in record.engine_unsupported or () if m.capability == "forget")
    unsupported = [p for p in record.probes if p.status == "unsupported"]
    assert unsupported and forget.probes == len(unsupported)
    md = render(record, "run.md.j2")
    assert "## Unsupported by the engine" in md and f"| forget | {forget.probes} | – |" in md
