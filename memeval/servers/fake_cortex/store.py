"""State of the fake CortexDB: events, idempotency keys, derived layers, packs, usage.

One re-entrant lock, ``Store.lock``, guards everything; a caller that reads several
collections for one answer holds it itself. ``Store.cond`` (on the same lock) wakes the
enrichment worker. With a ``data_file`` the whole state is written as JSON after each change
to events, keys, derived layers, scopes, claims or jobs (:meth:`Store.save`, atomic rename;
a replayed write, an empty build or a forget matching nothing change none, so write nothing;
usage charged by recall and answer rides along with the next save) and read back by
:meth:`Store.load`, so a killed and restarted server keeps its events, keys, derived layers
and enrichment queue. Recall packs are not persisted: a restart invalidates them, as a forget
does.

Usage prices are made up (see :data:`FAKE_PRICES`): deterministic numbers so that cost KPIs
have something to add up, not estimates of any real model's price.
"""

from __future__ import annotations

import json
import os
import threading
from collections import deque
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

FORMAT = 2  # 2: events lost their unread seq, conflicts their always-open status

# role -> (USD per unit of work, USD per token); fake prices, see the module docstring
FAKE_PRICES: dict[str, tuple[float, float]] = {
    "enrichment": (0.0001, 0.0),
    "belief_building": (0.0002, 0.0),
    "embeddings": (0.0, 2e-8),
    "answers": (0.0005, 1e-6),
}


def rfc3339_now() -> str:
    """The current UTC time as ``2026-09-01T09:00:00.123Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def within(scope: str, root: str) -> bool:
    """True when ``scope`` is ``root`` or lies below it (whole ``/`` segments)."""
    return scope == root or scope.startswith(root.rstrip("/") + "/")


@dataclass
class Event:
    """A stored event. ``visible_at`` is the wall-clock time (epoch s) it becomes readable."""

    id: str
    scope: str
    modality: str
    content: dict[str, Any]
    context: dict[str, Any]
    extra: dict[str, Any]
    visible_at: float
    key: str | None = None

    @property
    def text(self) -> str:
        return str(self.content.get("text", ""))

    @property
    def labels(self) -> list[str]:
        return list(self.context.get("labels", []))

    def wire(self) -> dict[str, Any]:
        """The event as listings and packs return it."""
        return {
            "id": self.id,
            "scope": self.scope,
            "modality": self.modality,
            "content": dict(self.content),
            "context": dict(self.context),
            **self.extra,
        }


@dataclass
class Fact:
    """A fact enrichment derived from one event."""

    id: str
    scope: str
    subject: str
    predicate: str
    object: str
    source_event: str
    built: bool = False

    def wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "scope": self.scope,
            "subject": self.subject,
            "predicate": self.predicate,
            "object": self.object,
            "source_event": self.source_event,
        }


@dataclass
class Belief:
    """A belief built from one fact; ``stance`` is supported, contested or superseded."""

    id: str
    scope: str
    subject: str
    predicate: str
    object: str
    stance: str
    confidence: float
    valid_from: str
    source_event: str

    def wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "scope": self.scope,
            "claim": {"subject": self.subject, "predicate": self.predicate, "object": self.object},
            "stance": self.stance,
            "confidence": self.confidence,
            "valid_from": self.valid_from,
        }


@dataclass
class Conflict:
    """Two or more objects claimed for one subject and predicate; always open (nothing resolves it)."""

    id: str
    scope: str
    subject: str
    predicate: str
    objects: list[str]
    sources: list[str]

    def wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": "value_conflict",
            "status": "open",
            "scope": self.scope,
            "subject": self.subject,
            "predicate": self.predicate,
            "records": [{"object": o} for o in self.objects],
        }


@dataclass
class Pack:
    """A recall pack: its scope, creation time (epoch s) and event ids in rank order."""

    id: str
    scope: str
    created: float
    event_ids: list[str]


@dataclass
class KeyEntry:
    """An idempotency key's claim: the body digest and the event it wrote."""

    digest: str
    event_id: str


@dataclass
class Job:
    """A pending enrichment job; it may start at ``ready_at`` (epoch s)."""

    event_id: str
    ready_at: float


@dataclass
class RoleUsage:
    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0


@dataclass
class Store:
    """The whole server state; see the module docstring for locking and persistence."""

    data_file: Path | None = None
    events: dict[str, Event] = field(default_factory=dict)
    keys: dict[str, KeyEntry] = field(default_factory=dict)
    facts: list[Fact] = field(default_factory=list)
    beliefs: list[Belief] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    erasures: dict[str, str] = field(default_factory=dict)
    scopes: dict[str, dict[str, Any]] = field(default_factory=dict)
    claims: set[str] = field(default_factory=set)
    jobs: deque[Job] = field(default_factory=deque)
    usage: dict[str, RoleUsage] = field(default_factory=lambda: {r: RoleUsage() for r in FAKE_PRICES})
    counters: dict[str, int] = field(default_factory=dict)
    packs: dict[str, Pack] = field(default_factory=dict)
    job_started: bool = False

    def __post_init__(self) -> None:
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)

    def new_id(self, prefix: str) -> str:
        """The next id ``<prefix>_<n>`` (n from 1, per prefix)."""
        with self.lock:
            n = self.counters.get(prefix, 0) + 1
            self.counters[prefix] = n
            return f"{prefix}_{n}"

    def add_event(self, event: Event, digest: str, enrich_at: float) -> None:
        """Store an event, claim its idempotency key for ``digest``, queue its enrichment job."""
        with self.cond:
            self.events[event.id] = event
            if event.key:
                self.keys[event.key] = KeyEntry(digest, event.id)
            self.jobs.append(Job(event.id, enrich_at))
            self.cond.notify_all()

    def charge(self, role: str, tokens: int, units: int = 1) -> None:
        """Record one call for ``role`` with its tokens, priced by :data:`FAKE_PRICES`."""
        per_unit, per_token = FAKE_PRICES[role]
        with self.lock:
            use = self.usage[role]
            use.calls += 1
            use.tokens += tokens
            use.cost_usd += per_unit * units + per_token * tokens

    def remove_events(self, ids: list[str], release_keys: bool) -> int:
        """Delete events; their idempotency keys are released or held (replays store nothing)."""
        with self.lock:
            removed = 0
            for event_id in ids:
                event = self.events.pop(event_id, None)
                if event is None:
                    continue
                removed += 1
                if release_keys and event.key:
                    self.keys.pop(event.key, None)
            return removed

    def remove_derived(self, event_ids: list[str]) -> tuple[int, int]:
        """Delete facts, beliefs and conflicts citing any of ``event_ids``; (facts, beliefs) deleted."""
        cited = set(event_ids)
        with self.lock:
            facts = [f for f in self.facts if f.source_event not in cited]
            beliefs = [b for b in self.beliefs if b.source_event not in cited]
            counts = (len(self.facts) - len(facts), len(self.beliefs) - len(beliefs))
            self.facts, self.beliefs = facts, beliefs
            self.conflicts = [c for c in self.conflicts if not cited.intersection(c.sources)]
            return counts

    def usage_report(self) -> dict[str, Any]:
        """The ``GET v1/admin/usage`` body."""
        with self.lock:
            by_role = {
                r: {"calls": u.calls, "tokens": u.tokens, "cost_usd": round(u.cost_usd, 8)}
                for r, u in self.usage.items()
            }
            pending = len(self.jobs)
            return {
                "total": {
                    "calls": sum(u.calls for u in self.usage.values()),
                    "tokens_total": sum(u.tokens for u in self.usage.values()),
                    "tokens_unsplit": self.usage["embeddings"].tokens,
                    "cost_usd": round(sum(u.cost_usd for u in self.usage.values()), 8),
                },
                "enrichment_backlog": {"jobs_pending": pending, "jobs_queued": pending - int(self.job_started)},
                "by_role": by_role,
            }

    def save(self) -> None:
        """Write the state to ``data_file`` (when set), atomically."""
        if self.data_file is None:
            return
        with self.lock:
            state = {
                "format": FORMAT,
                "counters": self.counters,
                "events": [asdict(e) for e in self.events.values()],
                "keys": {k: asdict(v) for k, v in self.keys.items()},
                "facts": [asdict(f) for f in self.facts],
                "beliefs": [asdict(b) for b in self.beliefs],
                "conflicts": [asdict(c) for c in self.conflicts],
                "erasures": self.erasures,
                "scopes": self.scopes,
                "claims": sorted(self.claims),
                "jobs": [asdict(j) for j in self.jobs],
                "usage": {r: asdict(u) for r, u in self.usage.items()},
            }
            tmp = self.data_file.with_name(self.data_file.name + ".tmp")
            tmp.write_text(json.dumps(state))
            os.replace(tmp, self.data_file)

    @classmethod
    def load(cls, data_file: Path | None) -> Store:
        """A store backed by ``data_file``, holding its saved state when the file exists.

        Raises ValueError when the file cannot be read or is not a state file of this format.
        """
        if data_file is None or not data_file.exists():
            return cls(data_file=data_file)
        try:
            state = json.loads(data_file.read_text())
        except OSError as err:
            raise ValueError(f"cannot read the state file {data_file}: {err.strerror}") from None
        except ValueError:
            state = None
        if not isinstance(state, dict) or state.get("format") != FORMAT:
            raise ValueError(f"{data_file} is not a fake-cortex state file (format {FORMAT})")
        try:
            return cls._from_state(data_file, state)
        except (KeyError, TypeError, AttributeError):
            raise ValueError(f"{data_file} is not a fake-cortex state file: its fields do not match") from None

    @classmethod
    def _from_state(cls, data_file: Path, state: dict[str, Any]) -> Store:
        return cls(
            data_file=data_file,
            events={e["id"]: Event(**e) for e in state["events"]},
            keys={k: KeyEntry(**v) for k, v in state["keys"].items()},
            facts=[Fact(**f) for f in state["facts"]],
            beliefs=[Belief(**b) for b in state["beliefs"]],
            conflicts=[Conflict(**c) for c in state["conflicts"]],
            erasures=dict(state["erasures"]),
            scopes=dict(state["scopes"]),
            claims=set(state["claims"]),
            jobs=deque(Job(**j) for j in state["jobs"]),
            usage={r: RoleUsage(**u) for r, u in state["usage"].items()},
            counters=dict(state["counters"]),
        )
