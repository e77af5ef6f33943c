"""Load a flag matrix (``matrix:`` files) into a validated, frozen :class:`Matrix`.

A matrix names the engine definition it sweeps (which must have a ``server:`` block), the suite,
a baseline environment and the profiles; each profile's env is laid over the baseline's, and
those are the only keys its server may differ in (the sweep's drift guard checks the flags the
server reports back). Paths are relative to the matrix file. ``extends: FILE`` inherits every
key a matrix leaves out from another matrix (the same profiles over another engine). Everything is checked before any
server starts: the schema, unique profile names, the port range, that the engine, suite and
config files exist and load, that ``run_args.only`` names scenarios of the suite, and that no
secret is set in YAML. Every problem is raised at once as a located :class:`SpecError`.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any
from collections.abc import Mapping

from memeval.engines.definition import EngineDef
from memeval.errors import SpecError, SpecIssue, UsageError
from memeval.secrets import has_credentials, is_secret_name
from memeval.spec.engine_def import load_engine_def, resolve_engine
from memeval.spec.load import load_suite, read_file
from memeval.spec.model import Suite
from memeval.spec.validate import schema_issues
from memeval.spec.yamlload import Marks, Path, render_path
from memeval.util.suggest import did_you_mean

DEFAULT_PORTS = (3150, 3199)
DEFAULT_CELL_TIMEOUT_S = 3600.0

Env = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Profile:
    """One configuration to sweep: env changes over the baseline, an optional config file
    (absolute path), and variables that must be set for it to run."""

    name: str
    about: str = ""
    targets: tuple[str, ...] = ()
    env: Env = ()
    config: str | None = None
    requires: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunArgs:
    """Options every cell's run gets (seconds; None means the run's default)."""

    only: tuple[str, ...] = ()
    enrich_wait_s: float | None = None
    settle_timeout_s: float | None = None
    llm: bool = False

    def argv(self) -> list[str]:
        """The ``memeval run`` options these stand for."""
        out = ["--only", ",".join(self.only)] if self.only else []
        out += ["--enrich-wait", f"{self.enrich_wait_s:g}"] if self.enrich_wait_s is not None else []
        out += ["--settle-timeout", f"{self.settle_timeout_s:g}"] if self.settle_timeout_s is not None else []
        return out + (["--llm"] if self.llm else [])


@dataclass(frozen=True)
class Matrix:
    """A validated flag matrix. ``suite`` and config paths are absolute."""

    name: str
    about: str
    file: str
    engine: EngineDef
    suite: str
    profiles: tuple[Profile, ...]
    baseline_env: Env = ()
    baseline_config: str | None = None
    flag_prefix: str = ""
    config_env: str | None = None
    repeat: int = 1
    parallel: int = 1
    ports: tuple[int, int] = DEFAULT_PORTS
    cell_timeout_s: float = DEFAULT_CELL_TIMEOUT_S
    run_args: RunArgs = RunArgs()

    def profile(self, name: str) -> Profile:
        """The profile called ``name``. Raises UsageError naming the known ones."""
        names = [p.name for p in self.profiles]
        if name not in names:
            raise UsageError(f"--profiles: no profile {name!r} in matrix {self.name}{did_you_mean(name, names)}; "
                             f"profiles: {', '.join(names)}")
        return self.profiles[names.index(name)]

    def intended_env(self, profile: Profile) -> dict[str, str]:
        """The server environment the profile asks for: the baseline's env, the profile's over
        it, and ``config_env`` set to the profile's (else the baseline's) config file."""
        env = {**dict(self.baseline_env), **dict(profile.env)}
        config = profile.config or self.baseline_config
        if config and self.config_env:
            env[self.config_env] = config
        return env

    def intended_flags(self, profile: Profile) -> dict[str, str]:
        """The part of :meth:`intended_env` the server reports as flags (``flag_prefix``)."""
        return {k: v for k, v in sorted(self.intended_env(profile).items()) if k.startswith(self.flag_prefix)}

    @staticmethod
    def missing(profile: Profile, environ: Mapping[str, str]) -> list[str]:
        """The ``requires`` variables unset (or empty) in ``environ``."""
        return [v for v in profile.requires if not environ.get(v)]


class _Issues:
    """Collects located issues for one matrix file."""

    def __init__(self, file: str, marks: Marks):
        self.file, self.marks = file, marks
        self.found: list[SpecIssue] = []

    def add(self, path: Path, message: str, key: bool = False) -> None:
        line, col = self.marks.at(path, key=key)
        self.found.append(SpecIssue(self.file, line, col, render_path(path), message))


def load_matrix(path: str, _chain: tuple[str, ...] = ()) -> Matrix:
    """Load and check a matrix file (see the module docstring). With ``extends: FILE`` every
    key the file leaves out (engine, suite, baseline, profiles, …) comes from that matrix.

    Raises:
        SpecError: every problem in the matrix, its engine definition and its suite.
    """
    data, marks, _ = read_file(path)
    issues = schema_issues(data, marks, "matrix", path)
    if issues or not isinstance(data, dict):
        raise SpecError(issues)
    found = _Issues(path, marks)
    folder = os.path.dirname(os.path.abspath(path))
    base = _base(data, folder, _chain + (os.path.abspath(path),), found)
    merged: dict[str, Any] = {f.name: getattr(base, f.name) for f in dataclasses.fields(Matrix)} if base else {}
    merged.update(_fields(data, path, folder, merged.get("config_env"), found))
    merged.update(name=data["matrix"], about=data.get("about", ""), file=path)
    for key in ("engine", "suite", "profiles"):
        if key not in merged and "extends" not in data:
            found.add((), f"missing required key {key!r} (or extends: a matrix that has it)")
    suite = _suite(merged["suite"], found) if "suite" in merged else None
    _check_run_args(data, merged.get("run_args"), suite, found)
    if found.found or merged.get("engine") is None:
        raise SpecError(found.found)
    return Matrix(**merged)


def _base(data: dict[str, Any], folder: str, chain: tuple[str, ...], found: _Issues) -> Matrix | None:
    if "extends" not in data:
        return None
    full = os.path.normpath(os.path.join(folder, data["extends"]))
    if os.path.abspath(full) in chain:
        found.add(("extends",), f"extends itself through {' → '.join(os.path.basename(c) for c in chain)}")
    elif not os.path.exists(full):
        found.add(("extends",), f"no such matrix file {os.path.relpath(full)!r}")
    else:
        try:
            return load_matrix(full if os.path.isabs(found.file) else os.path.relpath(full), chain)
        except SpecError as err:
            found.found += err.issues
    return None


def _fields(data: dict[str, Any], path: str, folder: str, inherited_config_env: str | None,
            found: _Issues) -> dict[str, Any]:
    """The :class:`Matrix` fields this file sets itself, checked."""
    out: dict[str, Any] = {}
    if "engine" in data:
        out["engine"] = _engine(data["engine"], path, folder, found)
    if "suite" in data:
        out["suite"] = os.path.normpath(os.path.join(folder, data["suite"]))
    config_env = data.get("config_env", inherited_config_env)
    if "baseline" in data:
        baseline = data["baseline"]
        _check_env(baseline.get("env", {}), ("baseline", "env"), found)
        out["baseline_env"] = _env(baseline.get("env", {}))
        out["baseline_config"] = _config(baseline.get("config"), folder, ("baseline", "config"), config_env, found)
    if "profiles" in data:
        _check_names(data, found)
        out["profiles"] = tuple(_profile(p, i, folder, config_env, found) for i, p in enumerate(data["profiles"]))
    _check_ports(data, found)
    if "ports" in data:
        out["ports"] = (data["ports"]["from"], data["ports"]["to"])
    for key in ("flag_prefix", "config_env", "repeat", "parallel"):
        if key in data:
            out[key] = data[key]
    if "cell_timeout_s" in data:
        out["cell_timeout_s"] = float(data["cell_timeout_s"])
    if "run_args" in data:
        args = data["run_args"]
        out["run_args"] = RunArgs(tuple(args.get("only", ())), args.get("enrich_wait_s"), args.get("settle_timeout_s"),
                                  bool(args.get("llm", False)))
    return out


def _engine(name: str, path: str, folder: str, found: _Issues) -> EngineDef | None:
    try:
        if name.endswith((".yaml", ".yml")) or "/" in name:
            full = os.path.normpath(os.path.join(folder, name))
            if not os.path.exists(full):
                found.add(("engine",), f"no such engine definition {os.path.relpath(full)!r}")
                return None
            engine = load_engine_def(full)
        else:
            engine = resolve_engine(name, path)
    except SpecError as err:
        found.found += err.issues
        return None
    except UsageError as err:
        found.add(("engine",), str(err).removeprefix("--engine: "))
        return None
    if engine.server is None:
        found.add(("engine",), f"engine {engine.name} has no server: block; a sweep starts one server per cell")
    return engine


def _suite(suite_path: str, found: _Issues) -> Suite | None:
    if not os.path.exists(suite_path):
        found.add(("suite",), f"no such suite file {os.path.relpath(suite_path)!r}")
        return None
    try:
        return load_suite(suite_path)
    except SpecError as err:
        found.found += err.issues
        return None


def _check_names(data: dict[str, Any], found: _Issues) -> None:
    seen: dict[str, int] = {}
    for i, profile in enumerate(data["profiles"]):
        if profile["name"] in seen:
            first = seen[profile["name"]]
            found.add(("profiles", i, "name"), f"duplicate profile name {profile['name']!r} (first is profiles[{first}])")
        seen.setdefault(profile["name"], i)


def _check_ports(data: dict[str, Any], found: _Issues) -> None:
    ports = data.get("ports")
    if ports and ports["to"] < ports["from"]:
        found.add(("ports", "to"), f"the range ends ({ports['to']}) before it starts ({ports['from']})")
    elif ports and ports["to"] - ports["from"] + 1 < data.get("parallel", 1):
        found.add(("ports",), f"{ports['to'] - ports['from'] + 1} port(s) cannot serve parallel: {data['parallel']}")


def _check_run_args(data: dict[str, Any], args: RunArgs | None, suite: Suite | None, found: _Issues) -> None:
    if suite is None or args is None:
        return
    known = [s.id for s in suite.scenarios]
    for i, sid in enumerate(args.only):
        if sid not in known:
            local = "run_args" in data
            found.add(("run_args", "only", i) if local else ("extends",), ("" if local else "run_args.only: ") +
                      f"no scenario {sid!r} in suite {suite.name}{did_you_mean(sid, known)}")


def _config(value: str | None, folder: str, where: Path, config_env: str | None, found: _Issues) -> str | None:
    if value is None:
        return None
    full = os.path.normpath(os.path.join(folder, value))
    if not os.path.exists(full):
        found.add(where, f"no such config file {os.path.relpath(full)!r}")
    if not config_env:
        found.add(where, "config: needs config_env: at the top level (the variable that hands the file to the server)")
    return full


def _profile(p: dict[str, Any], i: int, folder: str, config_env: str | None, found: _Issues) -> Profile:
    _check_env(p.get("env", {}), ("profiles", i, "env"), found)
    return Profile(p["name"], p.get("about", ""), tuple(p.get("targets", ())), _env(p.get("env", {})),
                   _config(p.get("config"), folder, ("profiles", i, "config"), config_env, found), tuple(p.get("requires", ())))


def is_secret(name: str, value: object = "") -> bool:
    """Whether a variable holds a secret: by its name (``…_KEY``, ``…_APIKEY``, ``…_PASSWORD``,
    ``…_CREDENTIALS``, see :mod:`memeval.secrets`) or by its value (a URL with user info)."""
    return is_secret_name(name) or has_credentials(str(value))


def _check_env(env: dict[str, Any], where: Path, found: _Issues) -> None:
    for key, value in env.items():
        if is_secret(key, value) and str(value) != "":
            found.add(where + (key,), f"{key} looks like a secret: set it in the environment (a matrix may only empty it)")


def _env(env: dict[str, Any]) -> Env:
    return tuple((k, str(v)) for k, v in env.items())
