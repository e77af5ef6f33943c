"""Load a suite (or a single scenario file) into a validated, frozen :class:`Suite`.

Nothing touches an engine before this succeeds: every problem in every file is collected and
raised together as one :class:`SpecError`. A spec file must be a regular file of at most
:data:`~memeval.spec.yamlload.MAX_BYTES` bytes; ``include:`` names ``.yaml`` files inside the
suite file's folder (nothing outside it is read, so no other file's content reaches a message).
"""

from __future__ import annotations

import glob
import hashlib
import os
import stat
from dataclasses import replace
from typing import Any

from memeval.errors import SpecError, SpecIssue
from memeval.spec import model as m
from memeval.spec.checks import Located, agent_tenants, check_scenario, check_suite, default_tenant, items, thread_tenant
from memeval.spec.errata import declared, errata_file, parse_errata, resolve
from memeval.spec.noise import read_noise, with_noise
from memeval.spec.times import epoch_issue, timeline_issues
from memeval.spec.validate import schema_issues
from memeval.spec.yamlload import MAX_BYTES, Marks, YamlProblem, problem_issue, read_yaml, render_path
from memeval.vocab import PHASES


def read_spec_bytes(path: str) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most :data:`MAX_BYTES` bytes
    (a FIFO, a device such as ``/dev/zero`` or a folder is refused without reading from it).

    Raises:
        SpecError: one issue saying why the file cannot be used.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block the open
    except OSError as err:
        raise SpecError([SpecIssue(path, 0, 0, "", f"cannot read: {err.strerror or err}")]) from None
    try:
        mode, size = os.fstat(fd).st_mode, os.fstat(fd).st_size
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device or socket"
            raise SpecError([SpecIssue(path, 0, 0, "", f"cannot read: it is {kind}, not a regular file; a spec is a YAML file")])
        with os.fdopen(os.dup(fd), "rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    finally:
        os.close(fd)
    if len(raw) > MAX_BYTES:
        raise SpecError([SpecIssue(path, 1, 1, "", f"file is {max(size, len(raw))} bytes; specs are limited to {MAX_BYTES} bytes")])
    return raw


def read_file(path: str) -> tuple[Any, Marks, bytes]:
    """Read and parse one YAML file. Raises SpecError (one issue) when it cannot be read."""
    raw = read_spec_bytes(path)
    try:
        data, marks = read_yaml(raw)
    except YamlProblem as problem:
        raise SpecError([problem_issue(path, problem)]) from None
    return data, marks, raw


def load_suite(path: str) -> m.Suite:
    """Load a suite file, or a scenario file as a suite of one.

    Schema and semantic checks run in one round: the semantic checks see every scenario, also
    one that breaks the schema, and skip only the values of the wrong type.

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
    if as_scenario:
        located = [Located(data, path, marks, ())]
        data = {"suite": data["scenario"], "scenarios": [data]}
    else:
        located = [Located(s, path, marks, ("scenarios", i)) for i, s in items(data, "scenarios")]
    files = [path]
    includes = data.get("include", [])
    for i, pattern in enumerate(includes if isinstance(includes, list) else []):
        if isinstance(pattern, str):
            issues += _read_include(path, marks, i, pattern, located, files, digest)
    issues += _semantic_issues(located, data, path, marks)
    dataset = None
    if isinstance(data.get("dataset"), dict) and not any(i.path.startswith("dataset") for i in issues):
        from memeval.spec.dataset import load_dataset  # the dataset readers load only for a suite that has one

        dataset, found = load_dataset(data["dataset"], path, marks)
        issues += found
        if dataset is not None:  # the suite's hash covers the data it runs, so a resume checks it too
            digest.update(dataset.sha256.encode())
    if ("grader" in data or "prompts" in data) and not any(i.path.startswith(("grader", "prompts")) for i in issues):
        from memeval.spec.dataset import suite_grader  # as above: only a suite that declares one

        issues += suite_grader(data, path, marks)
    errata, found = _errata(path, data, marks, located, dataset, digest)
    issues += found
    noise, found = _noise(path, data, marks, digest)
    issues += found
    if not located and not issues and dataset is None:
        issues.append(SpecIssue(path, 1, 1, "", "the suite has no scenarios: add include:, scenarios: or dataset:"))
    if issues:
        raise SpecError(issues)
    suite = replace(_build_suite(data, located, path, tuple(files), digest.hexdigest(), dataset), errata=errata)
    if noise is None:
        return suite
    return replace(suite, noise=noise, scenarios=tuple(with_noise(s, noise) for s in suite.scenarios))


def _noise(path: str, data: dict[str, Any], marks: Marks, digest: Any) -> tuple[m.Noise | None, list[SpecIssue]]:
    """The suite's haystack noise (its file's paragraphs in the suite's hash), or the issue reading it."""
    block = data.get("noise")
    if not isinstance(block, dict) or not isinstance(block.get("seed"), int) or not isinstance(block.get("tokens"), int):
        return None, []  # absent, or a shape the schema check has already reported
    try:
        noise = read_noise(block, path)
    except ValueError as err:
        line, column = marks.at(("noise",))
        return None, [SpecIssue(path, line, column, "noise.file", str(err))]
    digest.update("\n\n".join(noise.paragraphs).encode())
    return noise, []


def _errata(path: str, data: dict[str, Any], marks: Marks, located: list[Located], dataset: m.DatasetSource | None,
            digest: Any) -> tuple[m.Errata | None, list[SpecIssue]]:
    """The suite's errata file (:mod:`memeval.spec.errata`), read, validated and resolved; its
    bytes go into ``digest``, so the suite's hash moves with it."""
    found = declared(data)
    if not found:
        return None, []
    if len(found) > 1:
        line, col = marks.at(found[1][0])
        return None, [SpecIssue(path, line, col, "errata", "declare one errata file: dataset.errata for the dataset's "
                                "questions and the suite's probes alike, or errata: without a dataset")]
    key, written = found[0]
    file = errata_file(path, written)
    if dataset is None and key == ("dataset", "errata"):
        return None, []  # the dataset's own issue is reported
    try:
        errata_data, errata_marks, raw = read_file(file)
    except SpecError as err:
        line, col = marks.at(key)
        return None, [SpecIssue(path, line, col, ".".join(map(str, key)), f"errata file: {i.message}") for i in err.issues]
    parsed, issues = parse_errata(file, errata_data, errata_marks, raw)
    if parsed is None or issues:
        return None, issues
    digest.update(raw)
    return resolve(file, parsed, located, dataset), []


def _read_include(path: str, marks: Marks, index: int, pattern: str, located: list[Located], files: list[str],
                  digest: Any) -> list[SpecIssue]:
    """Read the scenario files ``include[index]`` names, appending them to ``located`` and
    ``files`` and their bytes to ``digest``; returns the issues found."""
    found, issues = _include(path, marks, index, pattern)
    for inc in found:
        try:
            inc_data, inc_marks, inc_raw = read_file(inc)
        except SpecError as err:
            issues += err.issues
            continue
        digest.update(inc_raw)
        files.append(inc)
        if not isinstance(inc_data, dict) or "scenario" not in inc_data:
            # Not a spec: say so without quoting a word of it.
            issues.append(_at_include(path, marks, index, f"{inc} is not a scenario file (no top-level scenario: key)"))
            continue
        issues += schema_issues(inc_data, inc_marks, "scenario", inc)
        located.append(Located(inc_data, inc, inc_marks, ()))
    return issues


def _semantic_issues(located: list[Located], data: dict[str, Any], path: str, marks: Marks) -> list[SpecIssue]:
    """Every scenario's semantic issues, the suite-wide ones and the timeline's."""
    defaults = data.get("defaults")
    found = [issue for loc in located for issue in check_scenario(loc) + timeline_issues(loc, defaults)]
    found += check_suite(located)
    epoch = epoch_issue(defaults, path, marks.at(("defaults", "epoch")))
    return found + ([epoch] if epoch else [])


def _at_include(path: str, marks: Marks, index: int, message: str) -> SpecIssue:
    line, col = marks.at(("include", index))
    return SpecIssue(path, line, col, f"include[{index}]", message)


def _include(path: str, marks: Marks, index: int, pattern: str) -> tuple[list[str], list[SpecIssue]]:
    """The files ``include[index]`` names, as the loader will show them; an include must name
    ``.yaml`` files inside the suite file's folder (symbolic links resolved)."""
    base = os.path.dirname(os.path.abspath(path))
    full = os.path.join(base, pattern)
    found = sorted(glob.glob(full)) if glob.has_magic(pattern) else ([full] if os.path.lexists(full) else [])
    shown = os.path.normpath(os.path.join(os.path.dirname(path), pattern))
    if not found:
        return [], [_at_include(path, marks, index, f"{pattern!r} matches no file: looked for {shown} "
                                "(include paths are relative to the suite file)")]
    inside, issues = [], []
    root = os.path.realpath(base)
    for f in found:
        show = os.path.normpath(f if os.path.isabs(path) or os.path.isabs(pattern) else os.path.relpath(f))
        if os.path.commonpath([root, os.path.realpath(f)]) != root:
            issues.append(_at_include(path, marks, index, f"{show} is outside the suite's folder {os.path.dirname(path) or '.'} "
                                      "(an include never reads it); move or copy the scenario file into that folder"))
        elif not f.endswith((".yaml", ".yml")):
            issues.append(_at_include(path, marks, index, f"{show} is not a .yaml file; include scenario files only"))
        else:
            inside.append(show)
    return inside, issues


def _build_suite(data: dict[str, Any], located: list[Located], path: str, files: tuple[str, ...], sha: str,
                 dataset: m.DatasetSource | None) -> m.Suite:
    match = data.get("match", "word")
    scenarios = tuple(build_scenario(loc, match) for loc in located)
    defaults = _plain(data.get("defaults", {}))
    if dataset is not None:  # unit threads are dated from the dataset's epoch unless one is declared
        defaults.setdefault("epoch", dataset.epoch)
    resolved = {k: v for k, v in data.items() if k not in ("include", "scenarios")}
    resolved["scenarios"] = [loc.data for loc in located]
    return m.Suite(
        name=data["suite"],
        about=data.get("about", ""),
        scenarios=scenarios,
        defaults=m.Defaults(**defaults),
        policy=m.Policy(**_plain(data.get("policy", {}))),
        agent=m.AgentOptions(**_plain(data.get("agent", {}))),
        match=data.get("match", "word"),
        llm=dict(data.get("llm", {})),
        gates={str(k): str(v) for k, v in data.get("gates", {}).items()},
        source=path,
        files=files,
        sha256=sha,
        resolved=resolved,
        dataset=dataset,
    )


def _plain(mapping: dict[str, Any]) -> dict[str, Any]:
    """Drop x- note keys before building a typed value."""
    return {k: v for k, v in mapping.items() if not k.startswith("x-")}


def build_scenario(loc: Located, match: str) -> m.Scenario:
    """The typed scenario from its checked raw data (a file's, or a dataset unit's mapping)."""
    scn = loc.data
    tenant = default_tenant(scn)
    agents = tuple(m.Agent(a["id"], _tenant(a, tenant), a.get("role", "")) for a in scn.get("agents", []))
    owners = agent_tenants(scn)
    docs = tuple(m.Document(d["id"], _tenant(d, tenant), d["source"], d["title"], d["text"], d.get("day"))
                 for d in scn.get("documents", []))
    learnings = tuple(m.Learning(x["id"], _tenant(x, tenant), x["kind"], x["text"], x.get("confidence"), x.get("day"))
                      for x in scn.get("learnings", []))
    threads = tuple(
        m.Thread(t["id"], str(thread_tenant(t, owners)), t["agent"], t.get("day", 0),
                 tuple(_exchange(e) for e in t["exchanges"]), _seconds(t.get("time", "00:00")), t.get("replay", False))
        for t in scn.get("threads", [])
    )
    probes = tuple(_probe(loc, i, p, owners, match) for i, p in enumerate(scn["probes"]))
    line, column = loc.marks.at(loc.base)
    return m.Scenario(scn["scenario"], scn["about"], tuple(scn.get("tenants") or ["main"]), agents, docs,
                      learnings, threads, tuple(scn.get("forget", [])), probes, m.Origin(loc.file, line, column, render_path(loc.base)))


def _tenant(rec: dict[str, Any], default: str | None) -> str:
    """A record's tenant: its own ``tenant:``, else the scenario's only one (the checks refused a
    record with neither before a scenario is built)."""
    tenant = rec.get("tenant") or default
    assert isinstance(tenant, str), "a record without a tenant in a scenario of several passed the checks"
    return tenant


def _seconds(hhmm: str) -> float:
    """A schema-checked ``HH:MM`` as seconds after midnight."""
    hours, minutes = hhmm.split(":")
    return float(int(hours) * 3600 + int(minutes) * 60)


def _exchange(raw: dict[str, Any]) -> m.Exchange:
    tools = tuple(m.Tool(t["name"], t["result"], t.get("carried", True)) for t in raw.get("tools", []))
    return m.Exchange(raw["user"], raw.get("reply"), tools, tuple(raw.get("ids", [])))


def _probe(loc: Located, index: int, p: dict[str, Any], owners: dict[str, list[str | None]], match: str) -> m.Probe:
    accept = tuple((a,) if isinstance(a, str) else tuple(a) for a in p.get("accept", []))
    line, column = loc.marks.at(loc.base + ("probes", index))
    return m.Probe(
        id=p["id"], route=p["route"], agent=p["agent"], tenant=str(thread_tenant(p, owners)),
        question=p["question"], style=p["style"], expect=tuple(p.get("expect", [])), accept=accept,
        stale=tuple(p.get("stale", [])), forbid=tuple(p.get("forbid", [])), abstain=p.get("abstain", False),
        thread=p.get("thread"), focus=p.get("focus"), dropped=tuple(p["dropped"]) if "dropped" in p else None,
        dropped_roles=p.get("dropped_roles", "all"), heading=p.get("heading"), leak_only=p.get("leak_only", False),
        groups=tuple(p.get("groups", [])), phases=tuple(p.get("phases", PHASES)),
        match=p.get("match", match), origin=m.Origin(loc.file, line, column, render_path(loc.base + ("probes", index))),
        category=p.get("category"), evidence=tuple(p.get("evidence", [])), answer_only=p.get("answer_only", False),
        asked_at=p.get("asked_at"), gold=p.get("gold"),
    )
