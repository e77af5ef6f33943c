"""One ``memeval run`` from start to finish: resolve the engine and options, open the journal,
start the engine's server if it has one, run the suite, answer with a model if asked, publish.

SIGTERM is handled like Ctrl-C while the engine part runs, so a cancelled job still forgets what
it wrote, stops a server it started and writes what finished.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from memeval.engines.definition import EngineDef
from memeval.spec.engine_def import resolve_engine
from memeval.engines.cancel import cancel_requests, reset_cancel
from memeval.engines.server import adapter_concurrent, engine_server
from memeval.errors import Outcome, UsageError
from memeval.util.interruptible import handling
from memeval.record import JsonObject, RepeatNote, RunRecord, Shard
from memeval.report.files import json_line, write_text
from memeval.report.gates import Gate, check, parse_fail_under, suite_gates
from memeval.runner.executor import check_executor, make_executor, parse_shard
from memeval.runner.checkpoint import new_run_id, open_journal, read_header
from memeval.runner.options import RunOptions, resolve_options
from memeval.runner.output import check_json_target, folder_lock, resume_folder, run_folder
from memeval.runner.library_log import library_log
from memeval.runner.preflight import collect, require, unmet
from memeval.runner.progress import ProgressEvent, display
from memeval.runner.suite import run_suite
from memeval.secrets import mask, mask_json
from memeval.score.derive import derive
from memeval.spec.errata import errata_warnings
from memeval.spec.load import load_suite
from memeval.spec.model import Suite

if TYPE_CHECKING:  # the answerer's modules load only when a run asks a model (--llm, --judge)
    from memeval.llm.settings import LlmSettings

Echo = Callable[[str], None]


@dataclass(frozen=True)
class RunRequest:
    """What ``memeval run`` was asked for, as given on the command line. ``engine`` None means
    "reference", or with ``resume`` the engine the run was started with."""

    suite_file: str
    engine: str | None = None
    only: tuple[str, ...] = ()
    label: str = ""
    out: str | None = None
    json_path: str | None = None
    keep: bool = False
    enrich_wait_s: float | None = None
    settle_timeout_s: float | None = None
    llm: bool = False
    judge: bool = False
    cache: bool = True
    cache_salt: str = ""
    templates: str | None = None
    resume: str | None = None
    quiet: bool = False
    force: bool = False
    junit: str | None = None
    fail_under: tuple[str, ...] = ()
    format: str = "text"
    executor: str = "local"
    scheduler: str | None = None
    workers: int | None = None
    jobs: int = 1
    shard: str | None = None
    judge_repeats: int = 1
    repeat: RepeatNote | None = None
    """Set by ``--repeat``: the run is one of a group of repeats, and its record says so."""


def run_session(req: RunRequest, echo: Echo, show: Echo) -> Outcome:
    """Run, publish and return how it ended (ok; a gate failed; engine failure for errored
    scenarios or model calls that failed; interrupted). ``echo`` takes progress and status
    lines, ``show`` the report (unless ``quiet``; with ``format`` "json", one JSON summary
    instead); both, and the record, have every known secret masked. Gates (the suite's and
    ``fail_under``) are checked before the engine starts. With ``resume``, what the request
    leaves unset (engine, --only, label, options) is taken from the run's journal."""
    return run_once(req, echo, show)[0]


def run_once(req: RunRequest, echo: Echo, show: Echo) -> tuple[Outcome, str]:
    """:func:`run_session`, also returning the run's folder (what ``--repeat`` reads back)."""
    echo, show = _masking(echo), _masking(show)
    req = _resumed(req, req.resume) if req.resume else req
    suite = load_suite(req.suite_file)
    for issue in errata_warnings(suite):  # an erratum naming nothing is never silent
        echo(f"warning: {issue.render()}")
    gates = suite_gates(suite.gates, req.suite_file) + [parse_fail_under(g) for g in req.fail_under]
    engine_def = resolve_engine(req.engine or "reference", req.suite_file)
    problems: list[str] = []  # every unmet requirement at once, before any engine or model call
    answerer = collect(problems, lambda: _answerer_settings(suite, req)) if req.llm or req.judge else None
    options = _options(req, suite, engine_def)
    shard = Shard(*parse_shard(req.shard)) if req.shard else None
    collect(problems, lambda: check_executor(req.executor, req.scheduler, req.workers, req.jobs))
    require(problems + unmet(suite, engine_def, os.environ, req.llm or req.judge, req.executor))
    if req.jobs > 1 and not adapter_concurrent(engine_def.adapter):
        raise UsageError(f"--jobs {req.jobs}: the {engine_def.adapter} adapter does not say its engine is safe across "
                         "threads; run it with --jobs 1 (or --executor dask, one engine per worker)")
    run_id = str(read_header(req.resume)["run_id"]) if req.resume else new_run_id()
    if req.json_path:
        check_json_target(req.json_path, run_id, req.force)
    folder = req.resume or run_folder(options.label, run_id, req.out, req.force)
    with folder_lock(folder):  # a second run into this folder is refused until this one ends
        journal = open_journal(folder, suite, options, req.resume is not None, run_id, _asked(req, engine_def))
        with _term_as_interrupt(), library_log(folder, req.quiet), \
                contextlib.closing(make_executor(req.executor, req.scheduler, req.workers, req.jobs)) as executor, \
                engine_server(engine_def, os.path.join(folder, "server.log")) as overrides, \
                display(echo, req.quiet) as progress:
            engine = engine_def.create(overrides)
            try:
                record = run_suite(suite, engine, options, progress, journal, executor, engine_def, shard)
                record = replace(record, repeat=req.repeat) if req.repeat else record
            finally:
                engine.close()
            if answerer is not None and not record.interrupted:  # after Ctrl-C stop now; a resume answers
                progress(ProgressEvent("answering", f"answering {len(record.probes)} probe records with the model"))
                record = _answer(record, answerer, echo, req.quiet)
        raw = record.to_json()
        data = mask_json(raw)  # one edge for run.json and the reports
        masked = record if data is raw else RunRecord.from_json(data)  # nothing masked: the record as it is
        return _finish(req, masked, data, folder, gates, echo, show), folder


def _finish(req: RunRequest, record: RunRecord, data: JsonObject, folder: str, gates: list[Gate], echo: Echo,
            show: Echo) -> Outcome:
    """Publish the run (``data`` is run.json's content, the record's), write the JUnit file,
    check the gates and say how it ended."""
    # The report modules (Jinja, JUnit XML, the CI summary) load only now that there is a record.
    from memeval.report.publish import publish

    report = publish(record, folder, req.templates, req.json_path, data)
    if req.junit:
        from memeval.report.junit import junit_xml

        write_text(req.junit, junit_xml(record, gates))
    if not req.quiet and req.format == "text":
        show(report)
    echo(f"wrote {os.path.join(folder, 'run.json')}, run.md and run.html" + (f"; JUnit {req.junit}" if req.junit else ""))
    outcome = _outcome(record, req.suite_file, folder, echo)
    verdicts = check(gates, record.kpis)
    for verdict in verdicts:
        if not verdict.passed or not req.quiet:
            echo(verdict.line)
    if outcome is Outcome.OK and not all(v.passed for v in verdicts):
        outcome = Outcome.GATE  # an engine failure or an interrupt says more than a gate it caused
    if req.format == "json":
        from memeval.report.ci import json_summary

        show(json_line(json_summary(record, folder, outcome.name.lower(), verdicts)))
    return outcome


def _masking(echo: Echo) -> Echo:
    """``echo`` with every known secret masked (a server may echo a key in an error)."""
    return lambda line: echo(mask(line))


def _resumed(req: RunRequest, resume: str) -> RunRequest:
    """``req`` with its resume folder resolved and what it leaves unset taken from the journal."""
    folder = resume_folder(resume)
    header = read_header(folder)
    asked = header.get("request") or {}
    return replace(req, resume=folder, engine=req.engine or asked.get("engine") or header["engine"],
                   only=req.only or tuple(header["only"]), label=req.label or str(header.get("label") or ""),
                   keep=req.keep or bool(asked.get("keep")), llm=req.llm or bool(asked.get("llm")),
                   judge=req.judge or bool(asked.get("judge")), cache_salt=req.cache_salt or asked.get("cache_salt", ""),
                   enrich_wait_s=_given(req.enrich_wait_s, asked.get("enrich_wait_s")),
                   settle_timeout_s=_given(req.settle_timeout_s, asked.get("settle_timeout_s")),
                   shard=req.shard or asked.get("shard"),
                   judge_repeats=req.judge_repeats if req.judge_repeats > 1 else int(asked.get("judge_repeats") or 1))


def _given(value: float | None, journal: float | None) -> float | None:
    return value if value is not None else journal


def _asked(req: RunRequest, engine_def: EngineDef) -> dict[str, Any]:
    """What a resume repeats: the engine (its definition file, absolute) and the options given."""
    engine = os.path.abspath(engine_def.file) if engine_def.file else engine_def.name
    return {"engine": engine, "keep": req.keep, "llm": req.llm, "judge": req.judge, "cache_salt": req.cache_salt,
            "enrich_wait_s": req.enrich_wait_s, "settle_timeout_s": req.settle_timeout_s, "shard": req.shard,
            "judge_repeats": req.judge_repeats}


def _options(req: RunRequest, suite: Suite, engine_def: EngineDef) -> RunOptions:
    return resolve_options(suite, engine_def.name, engine_def.enrich_wait_s, only=req.only, label=req.label,
                           keep=req.keep, enrich_wait_s=req.enrich_wait_s, settle_timeout_s=req.settle_timeout_s,
                           llm=req.llm or req.judge, jobs=req.jobs)


def _answerer_settings(suite: Suite, req: RunRequest) -> LlmSettings:
    from memeval.llm.settings import resolve

    dated = suite.dataset is not None or any(p.asked_at for s in suite.scenarios for p in s.probes)
    return resolve(suite.llm, os.environ, base_dir=os.path.dirname(req.suite_file), judge=req.judge,
                   cache=req.cache, salt=req.cache_salt, dated=dated, judge_repeats=req.judge_repeats)


def _answer(record: RunRecord, answerer: LlmSettings, echo: Echo, quiet: bool) -> RunRecord:
    from memeval.llm.answer import answer_steps, summary_lines

    latest = record
    try:
        for latest in answer_steps(record, answerer):
            pass
    except KeyboardInterrupt:  # keep what the engine measured; answers (if any) as far as they got
        return derive(replace(latest, interrupted=True))
    latest = derive(latest)
    summary = latest.answerer
    if summary is not None:
        bench = latest.benchmark.judge if latest.benchmark else None
        stops = {summary.stopped, summary.judge.stopped if summary.judge else None, bench.stopped if bench else None}
        for line in summary_lines(summary, bench):
            if not quiet or line in stops:  # --quiet keeps why the answerer stopped, not the tally
                echo(line)
    return latest


def _outcome(record: RunRecord, suite_file: str, folder: str, echo: Echo) -> Outcome:
    if record.interrupted:
        echo(f"interrupted: resume with: memeval run {shlex.quote(suite_file)} --resume {shlex.quote(folder)}")
        return Outcome.INTERRUPTED
    failed = [s for s in record.scenarios if not s.ok]
    for scenario in failed:
        echo(f"error: scenario {scenario.id}: {scenario.error}")
    calls = _failed_calls(record)
    if calls:
        echo(calls)
    return Outcome.ENGINE if failed or calls else Outcome.OK


def _failed_calls(record: RunRecord) -> str | None:
    """One line when model calls failed (the endpoint unreachable, timing out, erroring), else None.
    A refusal (401/402/403) is not counted here: it stops the answerer and says so itself."""
    summary = record.answerer
    if summary is None or not summary.failed:
        return None
    from memeval.llm.answer import NOT_ASKED

    errors = (p.call.llm_error for p in record.probes if p.call is not None)
    first = next((e for e in errors if e not in (None, NOT_ASKED)), "see run.json")
    return f"error: answerer: {summary.failed} of {summary.probes} model calls failed ({first}); results written"


@contextlib.contextmanager
def _term_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM (a cancelled CI job, a supervisor) stops the run as Ctrl-C does:
    what was written is forgotten, an engine server the run started is stopped, run.json keeps what
    finished, exit 130. Python's default would end the process at once and orphan that server.
    Both signals also cancel the engine requests in flight (a hanging engine is not waited for)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    reset_cancel()
    with handling((signal.SIGTERM, signal.SIGINT), _raise_interrupt):
        yield


def _raise_interrupt(signum: int, frame: object) -> None:
    cancel_requests()
    raise KeyboardInterrupt
