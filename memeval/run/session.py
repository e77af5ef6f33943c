"""One ``memeval run`` from start to finish: resolve the engine and options, open the journal,
start the engine's server if it has one, run the suite, answer with a model if asked, publish.

SIGTERM is handled like Ctrl-C while the engine part runs, so a cancelled job still forgets what
it wrote, stops a server it started and writes what finished.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from memeval.engines.definition import resolve_engine
from memeval.engines.server import engine_server
from memeval.errors import EXIT_ENGINE, EXIT_INTERRUPTED
from memeval.llm.answer import answer_steps, summary_lines
from memeval.llm.settings import LlmSettings, resolve
from memeval.record import RunRecord
from memeval.report.files import output_dir
from memeval.report.publish import publish
from memeval.run.checkpoint import open_journal
from memeval.run.options import RunOptions
from memeval.run.suite import run_suite
from memeval.score.derive import derive
from memeval.spec.load import load_suite

Echo = Callable[[str], None]


@dataclass(frozen=True)
class RunRequest:
    """What ``memeval run`` was asked for, as given on the command line."""

    suite_file: str
    engine: str = "reference"
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


def run_session(req: RunRequest, echo: Echo, show: Echo) -> int:
    """Run, publish and return the exit code (0, 3 for errored scenarios, 130 interrupted).
    ``echo`` takes progress and status lines, ``show`` the report (unless ``quiet``)."""
    suite = load_suite(req.suite_file)
    engine_def = resolve_engine(req.engine, req.suite_file)
    llm = req.llm or req.judge
    answerer = resolve(suite.llm, os.environ, base_dir=os.path.dirname(req.suite_file), judge=req.judge,
                       cache=req.cache, salt=req.cache_salt) if llm else None
    wait = next((w for w in (req.enrich_wait_s, suite.defaults.enrich_wait_s, engine_def.enrich_wait_s) if w is not None), None)
    options = RunOptions(engine=engine_def.name, only=req.only, label=req.label or engine_def.name, keep=req.keep,
                         enrich_wait_s=wait, settle_timeout_s=req.settle_timeout_s, llm=llm)
    folder = output_dir(options.label, req.resume or req.out)
    journal = open_journal(folder, suite, options, req.resume is not None)
    if req.resume and not req.label and journal.label:  # a resumed run keeps the label it was started with
        options = replace(options, label=journal.label)
    with _term_as_interrupt(), engine_server(engine_def, os.path.join(folder, "server.log")) as overrides:
        engine = engine_def.create(overrides)
        try:
            record = run_suite(suite, engine, options, (lambda _: None) if req.quiet else echo, journal)
        finally:
            engine.close()
    if answerer is not None and not record.interrupted:  # after Ctrl-C stop now; a resume answers
        record = _answer(record, answerer, echo)
    report = publish(record, folder, req.templates, req.json_path)
    if not req.quiet:
        show(report)
    echo(f"wrote {os.path.join(folder, 'run.json')}, run.md and run.html")
    return _outcome(record, req.suite_file, folder, echo)


def _answer(record: RunRecord, answerer: LlmSettings, echo: Echo) -> RunRecord:
    latest = record
    try:
        for latest in answer_steps(record, answerer):
            pass
    except KeyboardInterrupt:  # keep what the engine measured; answers (if any) as far as they got
        return derive(replace(latest, interrupted=True))
    latest = derive(latest)
    if latest.answerer is not None:
        for line in summary_lines(latest.answerer):
            echo(line)
    return latest


def _outcome(record: RunRecord, suite_file: str, folder: str, echo: Echo) -> int:
    if record.interrupted:
        echo(f"interrupted: resume with  memeval run {suite_file} --resume {folder}")
        return EXIT_INTERRUPTED
    failed = [s for s in record.scenarios if not s.ok]
    for scenario in failed:
        echo(f"error: scenario {scenario.id}: {scenario.error}")
    return EXIT_ENGINE if failed else 0


@contextlib.contextmanager
def _term_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM (a cancelled CI job, a supervisor) stops the run as Ctrl-C does:
    what was written is forgotten, an engine server the run started is stopped, run.json keeps what
    finished, exit 130. Python's default would end the process at once and orphan that server."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
