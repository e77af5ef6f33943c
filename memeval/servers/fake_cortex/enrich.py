"""Enrichment: a background worker deriving facts from stored events by one fixed rule.

Every stored event queues one job, ready once the event is indexed and the quiet period
(``CORTEX_ENRICHMENT_SCOPE_QUIET_MS``) has passed. The worker takes jobs in order, spends
``enrich_delay`` seconds on each, and charges one ``enrichment`` call. Jobs of events deleted
meanwhile derive nothing.

The rule (deterministic, no model): split the text into sentences (after ``.``, ``!`` or
``?`` followed by a space, and at line breaks); from each sentence take the first that applies:

1. ``<Label>: <value>`` with a label of 1-6 words gives (label, ``is``, value);
2. ``<Subject> <verb> <object>`` with a subject of 1-6 words and the earliest verb of
   :data:`VERBS` gives (subject, verb, object).

Trailing punctuation is stripped from the object; an empty object or one over 200 characters
gives nothing. So "Alice moved to Berlin." gives (Alice, moved to, Berlin).
"""

from __future__ import annotations

import re
import threading
import time

from memeval.servers.fake_cortex.store import Fact, Store
from memeval.servers.mock_inference.models import approx_tokens

VERBS = ("moved to", "lives in", "works at", "works on", "prefers", "uses", "likes", "is", "are", "was", "were", "has")
MAX_SUBJECT_WORDS = 6
MAX_OBJECT_CHARS = 200

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_LABELLED = re.compile(r"^(?P<subject>[^:]+?):\s+(?P<object>.+)$")
_CLAUSE = re.compile(
    r"^(?P<subject>.+?)\s+(?P<predicate>" + "|".join(re.escape(v) for v in VERBS) + r")\s+(?P<object>.+)$",
    re.IGNORECASE,
)


def extract_facts(text: str) -> list[tuple[str, str, str]]:
    """(subject, predicate, object) triples of ``text`` by the module's rule, in text order."""
    triples = []
    for sentence in _SENTENCE_END.split(text):
        triple = _triple(sentence.strip())
        if triple is not None:
            triples.append(triple)
    return triples


def _triple(sentence: str) -> tuple[str, str, str] | None:
    for pattern in (_LABELLED, _CLAUSE):
        match = pattern.match(sentence)
        if match is None:
            continue
        subject = match["subject"].strip()
        obj = match["object"].strip().rstrip(".!?;,").strip()
        if len(subject.split()) <= MAX_SUBJECT_WORDS and obj and len(obj) <= MAX_OBJECT_CHARS:
            predicate = match.groupdict().get("predicate") or "is"
            return subject, predicate.lower(), obj
    return None


class EnrichmentWorker(threading.Thread):
    """Drains ``store.jobs`` at ``delay`` seconds per job until :meth:`stop`."""

    def __init__(self, store: Store, delay: float):
        super().__init__(name="fake-cortex-enrichment", daemon=True)
        self._store = store
        self._delay = delay
        self._stopping = threading.Event()

    def run(self) -> None:
        while self._claim_next():
            if self._stopping.wait(self._delay):
                return
            self._finish()

    def stop(self) -> None:
        """Stop after the current job; returns once the thread has ended."""
        self._stopping.set()
        with self._store.cond:
            self._store.cond.notify_all()
        if self.is_alive():
            self.join(timeout=5)

    def _claim_next(self) -> bool:
        store = self._store
        with store.cond:
            while not self._stopping.is_set():
                if not store.jobs:
                    store.cond.wait()
                    continue
                wait = store.jobs[0].ready_at - time.time()
                if wait <= 0:
                    store.job_started = True
                    return True
                store.cond.wait(wait)
            return False

    def _finish(self) -> None:
        store = self._store
        with store.lock:
            job = store.jobs.popleft()
            store.job_started = False
            event = store.events.get(job.event_id)
            if event is not None:
                for subject, predicate, obj in extract_facts(event.text):
                    store.facts.append(Fact(store.new_id("fact"), event.scope, subject, predicate, obj, event.id))
                store.charge("enrichment", approx_tokens(event.text) + 100)
            store.save()
