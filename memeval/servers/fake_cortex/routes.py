"""The direct CortexDB API of the fake: ``v1/...`` routes behind a bearer key (wire notes 1, 2).

Errors are ``{"error_code": CODE, "message": text}``. ``v1/admin/health`` and
``v1/admin/ready`` need no key; ``v1/_fake/faults`` (see :mod:`memeval.servers.fake_cortex.faults`)
needs none and is never faulted. An ``X-Cortex-Actor`` header other than ``user:local`` is
401 ``ACTOR_MISMATCH``. A known path with another method is 405, anything else 404.
"""

from __future__ import annotations

import hmac
import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from memeval.servers.fake_cortex import beliefs
from memeval.servers.fake_cortex import forget as forgetting
from memeval.servers.fake_cortex import ops
from memeval.servers.fake_cortex import recall as recalling
from memeval.servers.fake_cortex.config import VERSION
from memeval.servers.fake_cortex.core import Core
from memeval.servers.fake_cortex.enrich import EnrichmentWorker
from memeval.servers.fake_cortex.faults import CONTROL_PATH, RESET, Injected

STATS_PATH = "v1/_fake/stats"
"""``GET``: ``{"answered": N}``, the requests answered so far but the control routes' (no auth)."""
from memeval.servers.httpjson import Call, HttpError, Reply, retry_after

Route = Callable[[Core, Call], Reply]
PUBLIC = frozenset({"v1/admin/health", "v1/admin/ready"})
CALLER = ops.OWNER


def check_bearer(call: Call, key: str) -> None:
    """Raises HttpError 401 ``UNAUTHORIZED`` unless ``Authorization: Bearer <key>``."""
    scheme, _, token = (call.header("authorization") or "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), key.encode()):
        raise HttpError(401, "UNAUTHORIZED", "missing or wrong bearer token")


def _experience(core: Core, call: Call) -> Reply:
    receipt = ops.append_many(core, [ops.check_experience(call.json_object())])[0]
    if call.param("wait") == "indexed":
        ops.wait_indexed(core, [receipt.event_id])
    return Reply(202, receipt.wire())


def _bulk(core: Core, call: Call) -> Reply:
    result = ops.append_bulk(core, call.json_object())
    if call.param("wait") == "indexed":
        ops.wait_indexed(core, [r["event_id"] for r in result["results"]])
    return Reply(200, result)


def _events(core: Core, call: Call) -> Reply:
    scope = ops.require_scope(call.param("scope"))
    return Reply(200, ops.list_events(core, scope, call.param("limit"), call.param("labels"), call.param("cursor")))


def _scopes_list(core: Core, call: Call) -> Reply:
    paths = ops.list_scopes(core, call.param("prefix"), call.param("limit"))
    return Reply(200, {"items": [{"path": p} for p in paths]})


def _build(core: Core, call: Call) -> Reply:
    return Reply(200, beliefs.build_beliefs(core, ops.require_scope(call.json_object().get("scope"))))


def _version(core: Core, call: Call) -> Reply:
    body = {"version": VERSION, "capabilities": list(core.config.capabilities), "flags": dict(core.config.flags),
            "wire": core.config.wire}
    return Reply(200, body)


def _posted(op: Callable[[Core, dict[str, Any]], Any], status: int = 200) -> Route:
    return lambda core, call: Reply(status, op(core, call.json_object()))


def _listing(op: Callable[[Core, str | None, str | None], Any]) -> Route:
    return lambda core, call: Reply(200, op(core, call.param("scope"), call.param("limit")))


def _fixed(body: dict[str, Any]) -> Route:
    return lambda core, call: Reply(200, body)


ROUTES: dict[tuple[str, str], Route] = {
    ("GET", "v1/auth/whoami"): _fixed({"caller": CALLER}),
    ("POST", "v1/experience"): _experience,
    ("POST", "v1/experience/bulk"): _bulk,
    ("GET", "v1/events"): _events,
    ("POST", "v1/recall"): _posted(recalling.recall),
    ("POST", "v1/answer"): _posted(recalling.answer),
    ("POST", "v1/forget"): _posted(forgetting.forget),
    ("POST", "v1/erasures"): _posted(forgetting.erase, 202),
    ("GET", "v1/scopes/list"): _scopes_list,
    ("POST", "v1/scopes"): _posted(ops.register_scope, 201),
    ("GET", "v1/scopes"): lambda core, call: Reply(200, ops.read_scope(core, call.param("path"))),
    ("PUT", "v1/scopes/members"): lambda core, call: Reply(
        200, ops.set_members(core, call.param("path"), call.json_object())
    ),
    ("POST", "v1/beliefs/build"): _build,
    ("GET", "v1/beliefs"): _listing(beliefs.list_beliefs),
    ("GET", "v1/facts"): _listing(beliefs.list_facts),
    ("GET", "v1/conflicts"): _listing(beliefs.list_conflicts),
    ("GET", "v1/admin/health"): _fixed({"status": "healthy"}),
    ("GET", "v1/admin/ready"): _fixed({"ready": True}),
    ("GET", "v1/admin/version"): _version,
    ("GET", "v1/admin/usage"): lambda core, call: Reply(200, core.store.usage_report()),
}
_PATHS = frozenset(path for _, path in ROUTES)
_ERASURE_PREFIX = "v1/erasures/"


def _resolve(call: Call) -> Route:
    route = ROUTES.get((call.method, call.path))
    if route is not None:
        return route
    if call.method == "GET" and call.path.startswith(_ERASURE_PREFIX):
        erasure_id = call.path[len(_ERASURE_PREFIX) :]
        return lambda core, _: Reply(200, forgetting.erasure_status(core, erasure_id))
    if call.path in _PATHS:
        raise HttpError(405, "METHOD_NOT_ALLOWED", f"{call.method} is not allowed on /{call.path}")
    raise HttpError(404, "NOT_FOUND", f"no route /{call.path}")


HANG_S = 3600.0


def garble(reply: Reply, mode: str) -> Reply:
    """``reply`` spoiled as ``mode`` says (see :class:`~memeval.servers.fake_cortex.config.GarbleRule`)."""
    data = json.dumps(reply.body).encode()
    if mode == "truncated":
        return replace(reply, raw=data[:max(1, len(data) // 2)])
    if mode == "html":
        return replace(reply, status=200, raw=b"<html><body>502 Bad Gateway</body></html>", content_type="text/html")
    if mode == "shape":
        return replace(reply, body=[reply.body])
    return replace(reply, byte_delay_s=1.0)


class CortexApp:
    """A fake CortexDB app: owns the enrichment worker and answers the fault control route."""

    def __init__(self, core: Core):
        self.core = core
        self._worker = EnrichmentWorker(core.store, core.config.enrich_delay)
        self._worker.start()
        self._jitter = random.Random(0)  # seeded: a run's delays are the same each time
        self._lock = threading.Lock()
        self._answered = 0

    def handle(self, call: Call) -> Reply | None:
        """Answer one request (None = reset the connection): the control route, else an
        injected fault, else :meth:`serve`."""
        if call.path == CONTROL_PATH:
            return self._control(call)
        if call.path == STATS_PATH:
            with self._lock:
                return Reply(200, {"answered": self._answered})
        self._wait()
        injected = self.core.faults.intercept(call.path)
        if injected == RESET:
            return None
        if isinstance(injected, Injected):
            return self.injected_reply(injected)
        mode = self.core.faults.garbled(call.path)
        if mode == "hang":  # nothing done, nothing said
            return Reply(200, byte_delay_s=HANG_S)
        reply = self.serve(call)
        return garble(reply, mode) if mode else reply

    def _wait(self) -> None:
        """Count the request; the configured latency, plus or minus the jitter, before its answer."""
        config = self.core.config
        with self._lock:
            self._answered += 1
            offset = self._jitter.uniform(-config.jitter, config.jitter) if config.jitter else 0.0
        if config.latency or offset:
            time.sleep(max(0.0, config.latency + offset))

    def injected_reply(self, injected: Injected) -> Reply:
        """An injected fault in the direct API's error shape."""
        body = {"error_code": injected.error_code, "message": "injected fault"}
        return Reply(injected.status, body, retry_after(injected.retry_after))

    def serve(self, call: Call) -> Reply:
        """Answer a request of the direct API."""
        try:
            if call.path not in PUBLIC:
                check_bearer(call, self.core.config.api_key)
                actor = call.header("x-cortex-actor")
                if actor is not None and actor != CALLER:
                    raise HttpError(401, "ACTOR_MISMATCH", f"actor {actor!r} is not the key's caller")
            return _resolve(call)(self.core, call)
        except HttpError as err:
            return Reply(err.status, {"error_code": err.code, "message": err.message})

    def _control(self, call: Call) -> Reply:
        if call.method == "POST":
            try:
                self.core.faults.update(call.json_object())
            except (ValueError, HttpError) as err:
                return Reply(422, {"error_code": "INVALID_BODY", "message": str(err)})
        return Reply(200, self.core.faults.snapshot())

    def close(self) -> None:
        """Stop the enrichment worker and write the state one last time."""
        self._worker.stop()
        self.core.store.save()
