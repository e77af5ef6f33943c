"""Running one sweep cell: start the profile's server, run the suite against it in a
``memeval run`` process, then check the flags the server reported (the drift guard).

A cell never raises: every failure becomes a :class:`CellResult` with a one-line reason, so the
other cells go on. The server is always torn down (``start_engine_server``'s ``with`` block);
the run process gets the server's URL through the adapter's ``url_env`` so it starts none.

Drift guard: the flags the server reported (run.json ``flags``, within the matrix's
``flag_prefix``) must equal the profile's intended flags; any difference fails the cell. A server
that reports no flags cannot be checked: run.json then holds the intended flags and
``sweep.flags_checked`` is false. The run record is replaced by one with the ``profile`` and a
``sweep`` note, and run.json, run.md and run.html are written again from it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from memeval.engines.server import adapter_url_env, start_engine_server
from memeval.errors import MemevalError
from memeval.record import JsonObject, SweepNote
from memeval.report.files import read_run
from memeval.report.publish import publish
from memeval.spec.matrix import Matrix, is_secret
from memeval.sweep.cells import Cell
from memeval.sweep.control import Control
from memeval.sweep.ports import PortPool, with_port

RUN = [sys.executable, "-c", "from memeval.cli import main; main()", "run"]
Progress = Callable[[str], None]


@dataclass(frozen=True)
class CellResult:
    """How a cell ended: ``ok``, ``failed`` (``reason`` says why) or ``interrupted``; ``port``
    and ``seconds`` are None for a cell that never started."""

    cell: Cell
    status: str
    reason: str | None = None
    port: int | None = None
    seconds: float | None = None
    drift: list[str] = field(default_factory=list)

    def to_json(self) -> JsonObject:
        """``{profile, repeat, label, status, reason, port, seconds, drift, folder}``."""
        return {"profile": self.cell.profile.name, "repeat": self.cell.repeat, "label": self.cell.label,
                "status": self.status, "reason": self.reason, "port": self.port,
                "seconds": None if self.seconds is None else round(self.seconds, 2),
                "drift": list(self.drift), "folder": self.cell.folder}


def drift(intended: dict[str, str], reported: dict[str, str]) -> list[str]:
    """One line per flag where the server differs from the profile's intended flags (values of
    secret-looking names shown as ``***``)."""
    out = []
    for key in sorted(set(intended) | set(reported)):
        want, got = (_shown(key, d.get(key)) for d in (intended, reported))
        if key not in reported:
            out.append(f"{key}: the profile sets {want}, the server does not report it")
        elif key not in intended:
            out.append(f"{key}={got} on the server but not in the profile (inherited from the environment?)")
        elif intended[key] != reported[key]:
            out.append(f"{key}: the profile sets {want}, the server reports {got}")
    return out


def _shown(key: str, value: str | None) -> str:
    return "'***'" if value and is_secret(key, value) else repr(value)


def repeat_salt(repeat: int) -> str:
    """The answer-cache salt of a repeat: repeats are independent samples, so one repeat's
    answers are never served from another's cache (profiles of one repeat still share it)."""
    return f"repeat-{repeat}"


def run_cell(matrix: Matrix, cell: Cell, ports: PortPool, control: Control, progress: Progress) -> CellResult:
    """Run one cell (see the module docstring), its run given ``matrix.cell_timeout_s``; never
    raises."""
    started = time.monotonic()
    if control.stopping.is_set():
        return CellResult(cell, "interrupted", "the sweep was interrupted before this cell started")
    port = ports.acquire()
    if port is None:
        return CellResult(cell, "failed", f"no free port in {matrix.ports[0]}-{matrix.ports[1]}")
    try:
        progress(f"cell {cell.label}: starting the server on port {port}")
        result = _serve_and_run(matrix, cell, port, control)
    except Exception as err:  # one cell's bug must not stop the sweep; it is reported as its reason
        result = CellResult(cell, "failed", f"{type(err).__name__}: {err}")
    finally:
        ports.release(port)
    result = replace(result, port=port, seconds=time.monotonic() - started)
    progress(f"cell {cell.label}: {result.status}" + (f": {result.reason}" if result.reason else "") +
             f" ({result.seconds:.1f} s)")
    return result


def _serve_and_run(matrix: Matrix, cell: Cell, port: int, control: Control) -> CellResult:
    url_env = adapter_url_env(matrix.engine.adapter)
    if not url_env:
        return CellResult(cell, "failed", f"adapter {matrix.engine.adapter} declares no url_env to reach a started server")
    os.makedirs(cell.folder, exist_ok=True)
    env = matrix.intended_env(cell.profile)
    try:
        with start_engine_server(with_port(matrix.engine, port), env, os.path.join(cell.folder, "server.log")) as url:
            code = _run(matrix, cell, {**os.environ, url_env: url}, control)
    except MemevalError as err:
        return CellResult(cell, "failed", f"server: {err}")
    if code is None:
        return CellResult(cell, "interrupted", "the sweep was interrupted")
    return _check(matrix, cell, code)


def _run(matrix: Matrix, cell: Cell, env: dict[str, str], control: Control) -> int | str | None:
    """The run process's exit code, ``"timeout"``, or None when the sweep is stopping."""
    argv = RUN + [matrix.suite, "--engine", os.path.abspath(matrix.engine.file or matrix.engine.name), "--out",
                  cell.folder, "--label", cell.label, "--force", "--quiet", *matrix.run_args.argv(),
                  "--cache-salt", repeat_salt(cell.repeat)]
    with open(os.path.join(cell.folder, "run.log"), "w", encoding="utf-8") as log:
        process = control.spawn(argv, env, log)
        if process is None:
            return None
        code: int | str
        try:
            code = process.wait(matrix.cell_timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            code = "timeout"
        finally:
            control.finished(process)
    return None if control.stopping.is_set() else code


def _check(matrix: Matrix, cell: Cell, code: int | str) -> CellResult:
    """Read the run back, apply the drift guard, and record the profile in run.json, run.md and
    run.html."""
    path = os.path.join(cell.folder, "run.json")
    if code == "timeout":
        return CellResult(cell, "failed", f"the run took longer than {matrix.cell_timeout_s:g} s")
    if not os.path.exists(path):
        return CellResult(cell, "failed", f"the run exited {code} without run.json: {_last_line(cell)}")
    record = read_run(path)
    intended = matrix.intended_flags(cell.profile)
    reported = {k: v for k, v in record.flags.items() if k.startswith(matrix.flag_prefix)}
    found = drift(intended, reported) if reported else []
    note = SweepNote(matrix.name, cell.profile.name, cell.repeat, intended, bool(reported), tuple(found))
    record = replace(record, profile=cell.profile.name, flags=reported or intended, sweep=note)
    publish(record, cell.folder)
    if found:
        return CellResult(cell, "failed", f"flag drift: {'; '.join(found)}", drift=found)
    if code != 0:
        errors = [f"{s.id}: {s.error}" for s in record.scenarios if s.error]
        return CellResult(cell, "failed", f"the run exited {code}: {'; '.join(errors) or _last_line(cell)}")
    return CellResult(cell, "ok")


def _last_line(cell: Cell) -> str:
    with open(os.path.join(cell.folder, "run.log"), encoding="utf-8", errors="replace") as log:
        lines = [line.strip() for line in log if line.strip()]
    return lines[-1] if lines else "no output"
