"""Load a suite (or a single scenario file) into a validated, frozen :class:`Suite`.

Nothing touches an engine before this succeeds: every problem in every file is collected and
raised together as one :class:`SpecError`.
"""

from __future__ import annotations

import glob
import hashlib
import os
from pathlib import Path as FsPath
from typing import Any

from memeval.errors import SpecError, SpecIssue
from memeval.spec import model as m
from memeval.spec.checks import Located, check_scenario, check_suite_ids, default_tenant
from memeval.spec.validate import schema_issues
from memeval.spec.yamlload import Marks, YamlProblem, problem_issue, read_yaml


def read_file(path: str) -> tuple[Any, Marks, bytes]:
    """Read and parse one YAML file. Raises SpecError (one issue) when it cannot be read."""
    try:
        raw = FsPath(path).read_bytes()
    except OSError as err:
        raise SpecError([SpecIssue(path, 0, 0, "", f"cannot read: {err.strerror or err}")]) from None
    try:
        data, marks = read_yaml(raw)
    except YamlProblem as problem:
        raise SpecError([problem_issue(path, problem)]) from None
    return data, marks, raw


def load_suite(path: str) -> m.Suite:
    """Load a suite file, or a scenario file as a suite of one.

    Raises:
        SpecError: with every issue found in the suite and the files it includes.
    """
    data, marks, raw = read_file(path)
    digest = hashlib.sha256(raw)
    # A scenario file is checked as the scenario it is, so that its issues read probes[0]… (as in
    # an included file), and only then wrapped as a suite of one.
    as_scenario = isinstance(data, dict) and "scenario" in data and "suite" not in data
    issues = schema_issues(data, marks, "scenario" if as_scenario else "suite", path)
    if not isinstance(data, dict):
        raise SpecError(issues)
    suite_ok = not issues
    if as_scenario:
        located = [Located(data, path, marks, ())] if suite_ok else []
        data = {"suite": data["scenario"], "scenarios": [data]}
    else:
        located = [Located(s, path, marks, ("scenarios", i)) for i, s in enumerate(data.get("scenarios", []))] if suite_ok else []
    files = [path]
    includes = data.get("include", [])
    for i, pattern in enumerate(includes if isinstance(includes, list) else []):
        if not isinstance(pattern, str):
            continue
        found, problems = _include(path, marks, i, pattern)
        issues += problems
        for inc in found:
            try:
                inc_data, inc_marks, inc_raw = read_file(inc)
            except SpecError as err:
                issues += err.issues
                continue
            digest.update(inc_raw)
            files.append(inc)
            problems = schema_issues(inc_data, inc_marks, "scenario", inc)
            issues += problems
            if not problems:
                located.append(Located(inc_data, inc, inc_marks, ()))
    for loc in located:
        issues += check_scenario(loc)
    issues += check_suite_ids(located)
    if not located and not issues:
        issues.append(SpecIssue(path, 1, 1, "", "the suite has no scenarios: add include: or scenarios:"))
    if issues:
        raise SpecError(issues)
    return _build_suite(data, located, path, tuple(files), digest.hexdigest())


def _include(path: str, marks: Marks, index: int, pattern: str) -> tuple[list[str], list[SpecIssue]]:
    base = os.path.dirname(os.path.abspath(path))
    full = os.path.join(base, pattern)
    found = sorted(glob.glob(full)) if glob.has_magic(pattern) else ([full] if os.path.exists(full) else [])
    if found:
        return [_shown(f, path) for f in found], []
    line, col = marks.at(("include", index))
    return [], [SpecIssue(path, line, col, f"include[{index}]", f"{pattern!r} matches no file (searched {_shown(full, path)})")]


def _shown(found: str, path: str) -> str:
    """``found`` spelled as ``path`` is: relative to the working directory unless ``path`` is absolute."""
    return found if os.path.isabs(path) else os.path.relpath(found)


def _build_suite(data: dict[str, Any], located: list[Located], path: str, files: tuple[str, ...], sha: str) -> m.Suite:
    match = data.get("match", "word")
    scenarios = tuple(_build_scenario(loc, match) for loc in located)
    resolved = {k: v for k, v in data.items() if k not in ("include", "scenarios")}
    resolved["scenarios"] = [loc.data for loc in located]
    return m.Suite(
        name=data["suite"],
        about=data.get("about", ""),
        scenarios=scenarios,
        defaults=m.Defaults(**_plain(data.get("defaults", {}))),
        policy=m.Policy(**_plain(data.get("policy", {}))),
        agent=m.AgentOptions(**_plain(data.get("agent", {}))),
        match=data.get("match", "word"),
        llm=dict(data.get("llm", {})),
        source=path,
        files=files,
        sha256=sha,
        resolved=resolved,
    )


def _plain(mapping: dict[str, Any]) -> dict[str, Any]:
    """Drop x- note keys before building a typed value."""
    return {k: v for k, v in mapping.items() if not k.startswith("x-")}


def _build_scenario(loc: Located, match: str) -> m.Scenario:
    scn = loc.data
    tenant = default_tenant(scn)
    agents = tuple(m.Agent(a["id"], a.get("tenant") or tenant, a.get("role", "")) for a in scn.get("agents", []))
    agent_tenant = {a.id: a.tenant for a in agents}
    docs = tuple(m.Document(d["id"], d.get("tenant") or tenant, d["source"], d["title"], d["text"], d.get("day"))
                 for d in scn.get("documents", []))
    learnings = tuple(m.Learning(x["id"], x.get("tenant") or tenant, x["kind"], x["text"], x.get("confidence"), x.get("day"))
                      for x in scn.get("learnings", []))
    threads = tuple(
        m.Thread(t["id"], agent_tenant[t["agent"]], t["agent"], t.get("day", 0),
                 tuple(_exchange(e) for e in t["exchanges"]))
        for t in scn.get("threads", [])
    )
    probes = tuple(_probe(loc, i, p, agent_tenant, match) for i, p in enumerate(scn["probes"]))
    line = loc.marks.at(loc.base)[0]
    return m.Scenario(scn["scenario"], scn["about"], tuple(scn.get("tenants") or ["main"]), agents, docs,
                      learnings, threads, tuple(scn.get("forget", [])), probes, m.Origin(loc.file, line))


def _exchange(raw: dict[str, Any]) -> m.Exchange:
    tools = tuple(m.Tool(t["name"], t["result"], t.get("carried", True)) for t in raw.get("tools", []))
    return m.Exchange(raw["user"], raw.get("reply"), tools)


def _probe(loc: Located, index: int, p: dict[str, Any], agent_tenant: dict[str, str], match: str) -> m.Probe:
    accept = tuple((a,) if isinstance(a, str) else tuple(a) for a in p.get("accept", []))
    line = loc.marks.at(loc.base + ("probes", index))[0]
    return m.Probe(
        id=p["id"], route=p["route"], agent=p["agent"], tenant=p.get("tenant") or agent_tenant[p["agent"]],
        question=p["question"], style=p["style"], expect=tuple(p.get("expect", [])), accept=accept,
        stale=tuple(p.get("stale", [])), forbid=tuple(p.get("forbid", [])), abstain=p.get("abstain", False),
        thread=p.get("thread"), focus=p.get("focus"), dropped=tuple(p["dropped"]) if "dropped" in p else None,
        groups=tuple(p.get("groups", [])), phases=tuple(p.get("phases", ["recall", "synthesis"])),
        match=p.get("match", match), origin=m.Origin(loc.file, line),
    )
