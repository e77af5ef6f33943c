"""The scoring setup of a run, read off its record, and its fingerprint.

:func:`scoring_setup` is a pure function of the record (resolved spec, engine snapshot,
answerer), so a record written before run.json carried ``setup`` gets the same setup on read
(:func:`setup_of`). :func:`fingerprint` is the sha256 of the setup's canonical JSON (sorted
keys, no spaces), shown by its first :data:`SHOWN` hex digits.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from memeval.plugins import BENCHMARKS, find
from memeval.record import BenchmarkInfo, BenchmarkJudge, ModelSide, RunRecord
from memeval.record.codec import Json, to_json
from memeval.record.setup import (DatasetSetup, EngineSetup, ErrataSetup, GraderJudgeSetup, GradingSetup, ModelSetup, NoiseSetup,
                                  PackSetup, Setup)
from memeval.score.clusters import clustering
from memeval.score.haystack import depth
from memeval.spec.model import Defaults, Policy

SHOWN = 12
"""Hex digits of the fingerprint shown in reports."""
@runtime_checkable
class _Abstaining(Protocol):
    """What the setup asks of a benchmark (:class:`memeval.benchmarks.base.Benchmark`)."""

    @property
    def abstention(self) -> str | None:
        """How its abstention questions are scored."""


WHERE = frozenset({"url", "base_url", "endpoint"})
"""Adapter settings that say where the engine ran (a sweep cell's port), not how: left out."""


def scoring_setup(record: RunRecord) -> Setup:
    """The setup ``record`` was scored under (see :class:`~memeval.record.setup.Setup`)."""
    spec = record.suite.resolved
    policy = {**Policy().__dict__, **_object(spec.get("policy"))}
    window = _object(spec.get("defaults")).get("window", Defaults().window)
    answerer = record.answerer
    engine = record.engine
    pack = PackSetup(*(int(str(policy[k])) for k in ("budget_tokens", "learnings", "brain", "history", "team")))
    errata = record.errata
    return Setup(
        suite=record.suite.name,
        spec_sha256=record.suite.sha256,
        dataset=_dataset(record.benchmark),
        grading=GradingSetup(str(spec.get("match", "word")), int(str(window)), f"memeval-{record.memeval_version}",
                             _upstream(record.benchmark), clustering(spec).unit),
        pack=pack,
        answer=_model(answerer),
        judge=_model(answerer.judge if answerer else None),
        engine=EngineSetup(engine.name, engine.version, engine.server_version, dict(record.flags),
                           {k: v for k, v in engine.settings.items() if k not in WHERE}),
        retrieval=depth(record.probes, spec, pack.budget_tokens, pack.learnings + pack.brain + pack.history + pack.team),
        errata=None if errata is None else ErrataSetup(errata.sha256, errata.count),
        grader_judge=_grader_judge(record.benchmark.judge if record.benchmark else None),
        noise=_noise(spec.get("noise")),
    )


def _noise(block: Json) -> NoiseSetup | None:
    """The suite's ``noise:`` block as the setup records it (None: the suite has none)."""
    if not isinstance(block, dict):
        return None
    name = block.get("file")
    return NoiseSetup(int(str(block["seed"])), int(str(block["tokens"])), None if name is None else str(name))


def setup_of(record: RunRecord) -> Setup:
    """The record's setup: the one it carries, else computed from what it holds."""
    return record.setup if record.setup is not None else scoring_setup(record)


def canonical(setup: Setup) -> str:
    """The setup's canonical JSON: sorted keys, no whitespace."""
    return json.dumps(to_json(setup), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def fingerprint(setup: Setup) -> str:
    """The first :data:`SHOWN` hex digits of sha256 over :func:`canonical`."""
    return hashlib.sha256(canonical(setup).encode("utf-8")).hexdigest()[:SHOWN]


def flatten(setup: Setup) -> dict[str, Json]:
    """The setup as dotted paths to leaf values (``judge.prompt.sha256``, ``engine.flags.K``);
    a missing block (None) is one leaf at its own path."""
    out: dict[str, Json] = {}
    _flatten(to_json(setup), "", out)
    return out


def _flatten(value: Json, path: str, out: dict[str, Json]) -> None:
    if isinstance(value, Mapping) and value:
        for key, inner in value.items():
            _flatten(inner, f"{path}.{key}" if path else key, out)
    else:
        out[path] = value


def _object(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _dataset(benchmark: BenchmarkInfo | None) -> DatasetSetup | None:
    """The benchmark the record names (streamed or imported): format, variant, sha256, its
    category map and abstention policy (None when the benchmark is not installed here)."""
    if benchmark is None:
        return None
    bench = find(BENCHMARKS, benchmark.format)
    return DatasetSetup(benchmark.format, benchmark.variant, benchmark.sha256 or None,
                        dict(benchmark.category_map) or None, bench.abstention if isinstance(bench, _Abstaining) else None)


def _upstream(benchmark: BenchmarkInfo | None) -> tuple[str, ...] | None:
    if benchmark is None:
        return None
    return tuple(f"{g.name} {g.version}: {g.upstream_repo} {g.upstream_file} @ {g.upstream_commit}"
                 for g in benchmark.graders)


def _grader_judge(judge: BenchmarkJudge | None) -> GraderJudgeSetup | None:
    if judge is None:
        return None
    return GraderJudgeSetup(f"{judge.grader.name}-{judge.grader.version}", judge.model, judge.sampling,
                            {t.key: t.sha256 for t in judge.templates})


def _model(side: ModelSide | None) -> ModelSetup | None:
    return None if side is None else ModelSetup(side.model, side.prompt, side.sampling)


__all__ = ["SHOWN", "canonical", "fingerprint", "flatten", "scoring_setup", "setup_of"]
