"""memeval as a library: what a notebook or a pytest suite needs, without the command line.

    import memeval

    suite = memeval.load_suite("specs/agent-memory.yaml")
    record = memeval.run(suite, engine="reference")          # a typed, frozen RunRecord
    hits = next(k for k in record.kpis if k.name == "pack hit (synthesis)")
    print(hits.value, hits.n)
    memeval.publish(record, "out/")                          # run.json, run.md, run.html
    comparison = memeval.compare([memeval.read_run("a/run.json"), record])
    print(memeval.render_comparison(comparison))

``run`` writes nothing to disk and keeps no journal (``memeval run`` adds those); it starts an
engine's server when the definition has one and stops it afterwards, and forgets what it wrote
unless ``keep``. An :class:`~memeval.engines.base.Engine` object may be passed instead of a
name: memeval then uses it as it is and leaves closing it to the caller.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from memeval.comparison import compare_records
from memeval.comparison.table import Comparison
from memeval.engines.base import Engine
from memeval.engines.server import engine_server
from memeval.errors import UsageError
from memeval.record import RunRecord
from memeval.report.files import read_run
from memeval.runner.options import RunOptions, resolve_options
from memeval.runner.progress import Progress
from memeval.runner.suite import run_suite
from memeval.spec.engine_def import resolve_engine
from memeval.spec.load import load_suite
from memeval.spec.model import Suite


def run(suite: Suite | str, engine: str | Engine = "reference", *, only: Sequence[str] = (), label: str = "",
        keep: bool = False, enrich_wait_s: float | None = None, settle_timeout_s: float | None = None,
        progress: Progress = lambda _: None) -> RunRecord:
    """Run ``suite`` (a loaded Suite or a suite file) on ``engine`` (a name or definition file as
    ``--engine`` takes it, or an Engine object) and return the run record. ``progress``
    receives a :class:`~memeval.runner.progress.ProgressEvent` per step (its ``text`` is the line
    ``memeval run`` logs).

    Raises:
        SpecError: the suite or engine definition is invalid.
        UsageError: an unknown engine or scenario, or an option the engine cannot honour.
        EngineError: the engine's server could not start (a failing engine call inside a
            scenario errors that scenario, as in ``memeval run``; see ``record.scenarios``).
    """
    loaded = load_suite(suite) if isinstance(suite, str) else suite
    if not isinstance(engine, str):
        options = _options(loaded, type(engine).__name__, None, only, label, keep, enrich_wait_s, settle_timeout_s)
        return run_suite(loaded, engine, options, progress)
    engine_def = resolve_engine(engine, loaded.source or None)
    options = _options(loaded, engine_def.name, engine_def.enrich_wait_s, only, label, keep, enrich_wait_s,
                       settle_timeout_s)
    with engine_server(engine_def) as overrides:
        built = engine_def.create(overrides)
        try:
            return run_suite(loaded, built, options, progress)
        finally:
            built.close()


def compare(runs: Sequence[RunRecord | str], baseline: str | None = None) -> Comparison:
    """Compare run records (or run.json paths) against the baseline, as ``memeval compare`` does.

    Raises:
        UsageError: no runs, a path that is not a run.json, or an unknown ``baseline``.
    """
    return compare_records([read_run(r) if isinstance(r, str) else r for r in runs], baseline)


def _options(suite: Suite, engine: str, engine_wait_s: float | None, only: Sequence[str], label: str, keep: bool,
             enrich_wait_s: float | None, settle_timeout_s: float | None) -> RunOptions:
    """The options ``memeval run`` would build, with the numbers checked as its command line does."""
    if settle_timeout_s is not None and not (math.isfinite(settle_timeout_s) and settle_timeout_s > 0):
        raise UsageError(f"settle_timeout_s must be a finite number > 0, got {settle_timeout_s!r}")
    if enrich_wait_s is not None and not (math.isfinite(enrich_wait_s) and enrich_wait_s >= 0):
        raise UsageError(f"enrich_wait_s must be a finite number >= 0, got {enrich_wait_s!r}")
    return resolve_options(suite, engine, engine_wait_s, only=tuple(only), label=label, keep=keep,
                           enrich_wait_s=enrich_wait_s, settle_timeout_s=settle_timeout_s)


__all__ = ["compare", "run"]
