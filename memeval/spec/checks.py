"""Semantic checks the schema cannot express: unique ids, references that resolve, defaults
that are ambiguous. Each check returns located issues; nothing is raised here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from memeval.errors import SpecIssue
from memeval.spec.yamlload import Marks, Path, render_path
from memeval.suggest import did_you_mean


@dataclass
class Located:
    """A scenario's raw data with the file and path it was read from."""

    data: dict[str, Any]
    file: str
    marks: Marks
    base: Path

    def issue(self, path: Path, message: str, key: bool = False) -> SpecIssue:
        """An issue at ``path`` inside this scenario."""
        line, col = self.marks.at(self.base + path, key=key)
        return SpecIssue(self.file, line, col, render_path(self.base + path), message)


def default_tenant(scn: dict[str, Any]) -> str | None:
    """The tenant a record without one belongs to: the only tenant, else None (ambiguous)."""
    tenants = scn.get("tenants") or ["main"]
    return tenants[0] if len(tenants) == 1 else None


def check_scenario(loc: Located) -> list[SpecIssue]:
    """Every semantic problem of one schema-valid scenario."""
    scn = loc.data
    issues: list[SpecIssue] = []
    for section in ("agents", "documents", "learnings", "threads", "probes"):
        issues += _unique_ids(loc, section)
    tenants = scn.get("tenants") or ["main"]
    for section in ("agents", "documents", "learnings"):
        for i, rec in enumerate(scn.get(section, [])):
            issues += _tenant_ref(loc, (section, i), rec.get("tenant"), tenants)
    agents = {a["id"]: a.get("tenant") or default_tenant(scn) for a in scn.get("agents", [])}
    threads = {t["id"]: t for t in scn.get("threads", [])}
    for i, thread in enumerate(scn.get("threads", [])):
        issues += _ref(loc, ("threads", i, "agent"), thread["agent"], agents, "agent")
    writable = {r["id"] for s in ("documents", "learnings", "threads") for r in scn.get(s, [])}
    for i, ref in enumerate(scn.get("forget", [])):
        issues += _ref(loc, ("forget", i), ref, writable, "document, learning or thread")
    for i, probe in enumerate(scn.get("probes", [])):
        issues += _check_probe(loc, ("probes", i), probe, agents, threads, tenants)
    return issues


def _unique_ids(loc: Located, section: str) -> list[SpecIssue]:
    seen: dict[str, int] = {}
    issues = []
    for i, rec in enumerate(loc.data.get(section, [])):
        rid = rec["id"]
        if rid in seen:
            issues.append(loc.issue((section, i, "id"), f"duplicate id {rid!r} (also {section}[{seen[rid]}])"))
        seen.setdefault(rid, i)
    return issues


def _ref(loc: Located, path: Path, value: str, known: Iterable[str], what: str) -> list[SpecIssue]:
    known = list(known)
    if value in known:
        return []
    listing = ", ".join(sorted(known)) or "none defined"
    return [loc.issue(path, f"unknown {what} {value!r}{did_you_mean(value, known)}; defined: {listing}")]


def _tenant_ref(loc: Located, path: Path, tenant: str | None, tenants: list[str]) -> list[SpecIssue]:
    if tenant is None:
        if len(tenants) > 1:
            return [loc.issue(path, f"needs a tenant: the scenario has several; add tenant: with one of {', '.join(tenants)}")]
        return []
    return _ref(loc, path + ("tenant",), tenant, tenants, "tenant")


def _check_probe(loc: Located, path: Path, probe: dict[str, Any], agents: dict[str, str | None],
                 threads: dict[str, dict[str, Any]], tenants: list[str]) -> list[SpecIssue]:
    issues = _ref(loc, path + ("agent",), probe["agent"], agents, "agent")
    if "tenant" in probe:
        issues += _ref(loc, path + ("tenant",), probe["tenant"], tenants, "tenant")
    route = probe["route"]
    if route in ("continue", "compact") and "thread" not in probe:
        issues.append(loc.issue(path, f"route {route!r} needs a thread", key=True))
    if route in ("ask", "brief") and "thread" in probe:
        why = "ask starts a new one" if route == "ask" else "a brief covers the whole tenant"
        issues.append(loc.issue(path + ("thread",), f"route {route!r} takes no thread ({why}; use continue or resume)", key=True))
    if "thread" in probe:
        issues += _ref(loc, path + ("thread",), probe["thread"], threads, "thread")
    if route == "compact" and "dropped" not in probe:
        issues.append(loc.issue(path, "route 'compact' needs dropped: [first, last] turn indices", key=True))
    if route != "compact" and "dropped" in probe:
        issues.append(loc.issue(path + ("dropped",), "only route 'compact' takes dropped turns", key=True))
    if route in ("ask", "continue") and "focus" in probe:
        issues.append(loc.issue(path + ("focus",), f"route {route!r} ranks for the question; focus is for resume, brief and compact", key=True))
    issues += _check_dropped(loc, path, probe, threads)
    issues += _check_expectations(loc, path, probe)
    return issues


def _check_dropped(loc: Located, path: Path, probe: dict[str, Any], threads: dict[str, dict[str, Any]]) -> list[SpecIssue]:
    dropped, thread = probe.get("dropped"), threads.get(probe.get("thread", ""))
    if not dropped or thread is None:
        return []
    last_turn = 2 * len(thread["exchanges"]) - 1
    first, last = dropped
    if first > last:
        return [loc.issue(path + ("dropped",), f"dropped [{first}, {last}] is backwards: write [first, last]")]
    if last > last_turn:
        return [loc.issue(path + ("dropped", 1), f"turn {last} does not exist: thread {thread['id']!r} has turns 0..{last_turn}")]
    return []


def _check_expectations(loc: Located, path: Path, probe: dict[str, Any]) -> list[SpecIssue]:
    if probe.get("abstain"):
        if "leaks" in probe.get("groups", []):
            return [loc.issue(path + ("groups",), "an abstention probe cannot feed leaks (its forbid lists invented answers); "
                              "use a probe with expect and forbid for a leak check")]
        if "expect" in probe:
            return [loc.issue(path + ("expect",), "an abstention probe expects no value (the answer is 'unknown'); list invented answers under forbid", key=True)]
        if "forbid" not in probe:
            return [loc.issue(path, "an abstention probe needs forbid: the invented answers that must not appear", key=True)]
        return []
    if "expect" not in probe:
        return [loc.issue(path, "missing expect: a scored probe must say what the pack must hold (or set abstain: true)", key=True)]
    if ("stale" in probe or "accept" in probe) and not probe.get("expect"):
        return [loc.issue(path, "stale and accept need expect")]
    return []


def check_suite_ids(scenarios: list[Located]) -> list[SpecIssue]:
    """Scenario ids must be unique across the whole suite."""
    seen: dict[str, str] = {}
    issues = []
    for loc in scenarios:
        sid = loc.data["scenario"]
        if sid in seen:
            issues.append(loc.issue(("scenario",), f"duplicate scenario id {sid!r} (also in {seen[sid]})"))
        seen.setdefault(sid, loc.file)
    return issues
