"""Semantic checks the schema cannot express: unique ids, references that resolve, defaults
that are ambiguous, ids that would share an engine tenant. Each check returns located issues;
nothing is raised here.

The checks run on raw data that may also break the schema (so a wrong agent name is reported in
the same round as a type error elsewhere): they look only at values of the right type and skip
the rest, which the schema already reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from memeval.errors import SpecIssue
from memeval.spec.yamlload import Marks, Path, render_path
from memeval.util.suggest import did_you_mean
from memeval.vocab import ROUTES


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


def items(data: dict[str, Any], section: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index, record) for the mappings listed under ``section`` (anything else is skipped)."""
    records = data.get(section)
    for i, rec in enumerate(records if isinstance(records, list) else []):
        if isinstance(rec, dict):
            yield i, rec


def text(value: Any) -> str | None:
    """``value`` when it is a string, else None."""
    return value if isinstance(value, str) else None


def whole(value: Any) -> int | None:
    """``value`` when it is a whole number (not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def number(value: Any) -> float | None:
    """``value`` as a float when it is a number (not a bool), else None."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def tenants_of(scn: dict[str, Any]) -> list[str] | None:
    """The scenario's tenants (default ``main``), or None when ``tenants:`` is malformed."""
    tenants = scn.get("tenants", ["main"])
    if not isinstance(tenants, list) or not tenants or not all(isinstance(t, str) for t in tenants):
        return None
    return tenants


def default_tenant(scn: dict[str, Any]) -> str | None:
    """The tenant a record without one belongs to: the only tenant, else None (ambiguous)."""
    tenants = tenants_of(scn) or []
    return tenants[0] if len(tenants) == 1 else None


def check_scenario(loc: Located) -> list[SpecIssue]:
    """Every semantic problem of one scenario (values of the wrong type are skipped)."""
    scn = loc.data
    issues: list[SpecIssue] = []
    for section in ("documents", "learnings", "probes"):
        issues += _unique_ids(loc, section)
    tenants = tenants_of(scn)
    agents = agent_tenants(scn)
    issues += _unique_ids(loc, "agents", lambda a: text(a.get("tenant")) or default_tenant(scn))
    issues += _unique_ids(loc, "threads", lambda t: thread_tenant(t, agents))
    if tenants is not None:
        for section in ("agents", "documents", "learnings", "threads"):
            for i, rec in items(scn, section):
                if section != "threads" or "tenant" in rec:
                    issues += _tenant_ref(loc, (section, i), rec.get("tenant"), tenants)
    threads = {(thread_tenant(t, agents), t["id"]): t for _, t in items(scn, "threads") if text(t.get("id"))}
    for i, thread in items(scn, "threads"):
        issues += _agent_ref(loc, ("threads", i), thread, agents)
    writable = {r["id"] for s in ("documents", "learnings", "threads") for _, r in items(scn, s) if text(r.get("id"))}
    forget = scn.get("forget")
    for i, ref in enumerate(forget if isinstance(forget, list) else []):
        issues += _ref(loc, ("forget", i), ref, writable, "document, learning or thread")
    for i, probe in items(scn, "probes"):
        issues += _check_probe(loc, ("probes", i), probe, agents, threads, tenants)
    return issues


def agent_tenants(scn: dict[str, Any]) -> dict[str, list[str | None]]:
    """Per agent id, the tenants that have an agent with that id (ids are unique per tenant)."""
    out: dict[str, list[str | None]] = {}
    for _, agent in items(scn, "agents"):
        if text(agent.get("id")):
            out.setdefault(agent["id"], []).append(text(agent.get("tenant")) or default_tenant(scn))
    return out


def thread_tenant(rec: dict[str, Any], agents: dict[str, list[str | None]]) -> str | None:
    """The tenant of a thread or probe: its own ``tenant:``, else its agent's only tenant (None
    when unknown or ambiguous)."""
    if text(rec.get("tenant")):
        return str(rec["tenant"])
    owners = agents.get(text(rec.get("agent")) or "", [])
    return owners[0] if len(owners) == 1 else None


def _agent_ref(loc: Located, path: Path, rec: dict[str, Any], agents: dict[str, list[str | None]],
               strict: bool = True) -> list[SpecIssue]:
    """The record's agent exists (in its tenant when ``strict``: a probe may ask another tenant's
    memory); an agent id held by several tenants needs ``tenant:`` naming one of them."""
    agent = rec.get("agent")
    if not isinstance(agent, str) or agent not in agents:
        return _ref(loc, path + ("agent",), agent, agents, "agent")
    owners = list(dict.fromkeys(t for t in agents[agent] if t is not None))
    tenant = text(rec.get("tenant"))
    if len(owners) > 1 and tenant not in owners:
        return [loc.issue(path + ("agent",), f"agent {agent!r} is in tenants {', '.join(owners)}: add tenant: with one of them")]
    if strict and tenant is not None and owners and tenant not in owners:
        return [loc.issue(path + ("tenant",), f"agent {agent!r} is not in tenant {tenant!r}; it is in {', '.join(owners)}")]
    return []


def _unique_ids(loc: Located, section: str, scope: Callable[[dict[str, Any]], str | None] = lambda _: None) -> list[SpecIssue]:
    """Ids unique within ``section``, per ``scope`` (the tenant, for agents and threads)."""
    seen: dict[tuple[str | None, str], int] = {}
    issues = []
    for i, rec in items(loc.data, section):
        rid = text(rec.get("id"))
        if rid is None:
            continue
        key = (scope(rec), rid)
        if key in seen:
            where = f" in tenant {key[0]!r}" if key[0] is not None and section in ("agents", "threads") else ""
            issues.append(loc.issue((section, i, "id"), f"duplicate id {rid!r}{where} (also {section}[{seen[key]}])"))
        seen.setdefault(key, i)
    return issues


def _ref(loc: Located, path: Path, value: Any, known: Iterable[str], what: str) -> list[SpecIssue]:
    known = list(known)
    if not isinstance(value, str) or value in known:
        return []
    listing = ", ".join(sorted(known)) or "none defined"
    return [loc.issue(path, f"unknown {what} {value!r}{did_you_mean(value, known)}; defined: {listing}")]


def _tenant_ref(loc: Located, path: Path, tenant: Any, tenants: list[str]) -> list[SpecIssue]:
    if tenant is None:
        if len(tenants) > 1:
            return [loc.issue(path, f"needs a tenant: the scenario has several; add tenant: with one of {', '.join(tenants)}")]
        return []
    return _ref(loc, path + ("tenant",), tenant, tenants, "tenant")


def _check_probe(loc: Located, path: Path, probe: dict[str, Any], agents: dict[str, list[str | None]],
                 threads: dict[tuple[str | None, str], dict[str, Any]], tenants: list[str] | None) -> list[SpecIssue]:
    issues = _agent_ref(loc, path, probe, agents, strict=False)
    if "tenant" in probe and tenants is not None:
        issues += _ref(loc, path + ("tenant",), probe["tenant"], tenants, "tenant")
    route = probe.get("route")
    if route in ("continue", "compact") and "thread" not in probe:
        issues.append(loc.issue(path, f"route {route!r} needs a thread", key=True))
    if route in ("ask", "brief") and "thread" in probe:
        why = "ask starts a new one" if route == "ask" else "a brief covers the whole tenant"
        issues.append(loc.issue(path + ("thread",), f"route {route!r} takes no thread ({why}; use continue or resume)", key=True))
    thread = None
    if "thread" in probe:
        thread, found = _probe_thread(loc, path, probe, agents, threads)
        issues += found
    if route == "compact" and "dropped" not in probe:
        issues.append(loc.issue(path, "route 'compact' needs dropped: [first, last] turn indices", key=True))
    for key, only, what in (("dropped", "compact", "dropped turns"), ("dropped_roles", "compact", "dropped_roles"),
                            ("heading", "brief", "a heading")):
        if key in probe and route != only and route in ROUTES:
            issues.append(loc.issue(path + (key,), f"only route {only!r} takes {what}", key=True))
    if route in ("ask", "continue") and "focus" in probe:
        issues.append(loc.issue(path + ("focus",), f"route {route!r} ranks for the question; focus is for resume, brief and compact", key=True))
    issues += _check_dropped(loc, path, probe, thread)
    issues += _check_expectations(loc, path, probe)
    return issues



def _probe_thread(loc: Located, path: Path, probe: dict[str, Any], agents: dict[str, list[str | None]],
                  threads: dict[tuple[str | None, str], dict[str, Any]]) -> tuple[dict[str, Any] | None, list[SpecIssue]]:
    """The thread a probe names: the one in the probe's tenant, else the only one with that id."""
    tid = probe["thread"]
    if not isinstance(tid, str):
        return None, []
    found = {tenant: t for (tenant, i), t in threads.items() if i == tid}
    tenant = thread_tenant(probe, agents)
    if tenant in found:
        return found[tenant], []
    if len(found) == 1:
        return next(iter(found.values())), []
    if found:
        owners = ", ".join(sorted(str(t) for t in found))
        return None, [loc.issue(path + ("thread",), f"thread {tid!r} is in tenants {owners}: add tenant: with one of them")]
    return None, _ref(loc, path + ("thread",), tid, sorted({i for _, i in threads}), "thread")


def _check_dropped(loc: Located, path: Path, probe: dict[str, Any], thread: dict[str, Any] | None) -> list[SpecIssue]:
    dropped = probe.get("dropped")
    if not isinstance(dropped, list) or len(dropped) != 2 or thread is None or not isinstance(thread.get("exchanges"), list):
        return []
    first, last = (whole(d) for d in dropped)
    if first is None or last is None:
        return []
    last_turn = 2 * len(thread["exchanges"]) - 1
    if first > last:
        return [loc.issue(path + ("dropped",), f"dropped [{first}, {last}] is backwards: write [first, last]")]
    if last > last_turn:
        return [loc.issue(path + ("dropped", 1), f"turn {last} does not exist: thread {thread['id']!r} has turns 0..{last_turn}")]
    return []


def _check_expectations(loc: Located, path: Path, probe: dict[str, Any]) -> list[SpecIssue]:
    if probe.get("leak_only") is True:
        return _check_leak_only(loc, path, probe)
    if probe.get("abstain") is True:
        groups = probe.get("groups")
        if isinstance(groups, list) and "leaks" in groups:
            return [loc.issue(path + ("groups",), "an abstention probe cannot feed leaks (its forbid lists invented answers); "
                              "use a probe with expect and forbid, or leak_only: true, for a leak check")]
        if "expect" in probe:
            return [loc.issue(path + ("expect",), "an abstention probe expects no value (the answer is 'unknown'); list invented answers under forbid", key=True)]
        if "forbid" not in probe and probe.get("answer_only") is not True:
            return [loc.issue(path, "an abstention probe needs forbid: the invented answers that must not appear "
                              "(or answer_only: true, to grade only the model's answer)", key=True)]
        return []
    if "abstain" in probe and not isinstance(probe["abstain"], bool):
        return []  # the schema reports the value; whether expect is needed is unknown
    if "expect" not in probe and "gold" in probe:  # a judged probe: only a benchmark's judge grader scores it
        for key in ("stale", "accept"):
            if key in probe:
                return [loc.issue(path + (key,), f"a judged probe (gold, no expect) holds nothing a pack is checked for, "
                                  f"so it takes no {key}; drop it, or add expect", key=True)]
        return []
    if "expect" not in probe:
        return [loc.issue(path, "missing expect: a scored probe must say what the pack must hold (or set abstain: true, or leak_only: true with forbid)", key=True)]
    if ("stale" in probe or "accept" in probe) and not probe.get("expect"):
        return [loc.issue(path, "stale and accept need expect")]
    return []


def _check_leak_only(loc: Located, path: Path, probe: dict[str, Any]) -> list[SpecIssue]:
    """A leak-only probe scores nothing but its forbidden strings."""
    for key in ("expect", "accept", "stale", "abstain", "gold"):
        if key in probe:
            return [loc.issue(path + (key,), f"a leak-only probe scores no answer, so it takes no {key}; "
                              "drop it, or drop leak_only for a scored probe", key=True)]
    if "forbid" not in probe:
        return [loc.issue(path, "a leak-only probe needs forbid: the strings that must never appear in the pack", key=True)]
    return []


def check_suite(scenarios: list[Located]) -> list[SpecIssue]:
    """Suite-wide rules: scenario ids unique, probe ids unique across every scenario and file,
    and no two (scenario, tenant) pairs mapping to one engine tenant (see :func:`tenant_key`)."""
    return _unique_scenarios(scenarios) + _unique_probes(scenarios) + _distinct_tenants(scenarios)


def _unique_scenarios(scenarios: list[Located]) -> list[SpecIssue]:
    seen: dict[str, str] = {}
    issues = []
    for loc in scenarios:
        sid = text(loc.data.get("scenario"))
        if sid is None:
            continue
        if sid in seen:
            issues.append(loc.issue(("scenario",), f"duplicate scenario id {sid!r} (also in {seen[sid]})"))
        seen.setdefault(sid, loc.file)
    return issues


def _unique_probes(scenarios: list[Located]) -> list[SpecIssue]:
    first: dict[str, tuple[Located, int]] = {}
    issues = []
    for loc in scenarios:
        for i, probe in items(loc.data, "probes"):
            pid = text(probe.get("id"))
            if pid is None:
                continue
            # Within one scenario _unique_ids says it; a repeated scenario id is reported as that.
            if pid in first and first[pid][0].data.get("scenario") != loc.data.get("scenario"):
                other, j = first[pid]
                line = other.marks.at(other.base + ("probes", j))[0]
                issues.append(loc.issue(("probes", i, "id"), f"duplicate probe id {pid!r} (also scenario "
                                        f"{other.data.get('scenario')!r} at {other.file}:{line}); probe ids are unique across the suite"))
            first.setdefault(pid, (loc, i))
    return issues


def tenant_key(scenario: str, tenant: str) -> str:
    """The part of an engine tenant name that comes from the spec: ``<scenario>-<tenant>``
    with ``_`` written ``-`` (engines accept fewer characters than ids do)."""
    return f"{scenario.replace('_', '-')}-{tenant}"


def _distinct_tenants(scenarios: list[Located]) -> list[SpecIssue]:
    # Compared without case too: an engine may fold case in tenant names.
    owners: dict[str, tuple[str, str]] = {}
    issues = []
    for loc in scenarios:
        sid = text(loc.data.get("scenario"))
        if sid is None:
            continue
        for tenant in tenants_of(loc.data) or []:
            key = tenant_key(sid, tenant).lower()
            owner = owners.setdefault(key, (sid, tenant))
            if owner[0] != sid:
                issues.append(loc.issue(("scenario",), f"scenario {sid!r} tenant {tenant!r} and scenario {owner[0]!r} tenant "
                                        f"{owner[1]!r} would share one engine tenant ({tenant_key(sid, tenant)!r}); "
                                        "rename one scenario (ids may not differ only in '_' and '-' or in case)"))
    return issues
