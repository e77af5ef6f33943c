"""The hosted TinyHumans shape of the fake CortexDB (``--hosted``; wire notes 4).

Routes: ``POST memory/experience``, ``GET memory/events``, ``POST memory/recall``,
``POST memory/forget``, ``POST memory/answer``, ``GET memory/scopes`` (``{scopes:[path]}``),
``DELETE memory`` and ``POST memory/v1/erasures``. Everything else (bulk, admin, whoami,
beliefs, ``v1/*``) is 404; ``?wait=`` is ignored like any unknown parameter.

- Auth: ``Authorization: Bearer <TINYHUMANS_API_KEY>`` (default ``tiny_live_test``).
- Success: ``{success: true, data: <direct body>}``; failure ``{success: false, error,
  errorCode}``. A 429 of the rate limiter (``hosted_rate_limit`` per minute) or of an injected
  fault comes OUTSIDE the envelope: ``{error: {message, type: "rate_limit_error"}}``.
- Engine errors are relayed: 404 ``NOT_FOUND``, 409 ``CONFLICT``, 413 ``PAYLOAD_TOO_LARGE``,
  other 4xx 400 ``BAD_REQUEST``, 503 ``UPSTREAM_UNAVAILABLE``, 401/403 and other 5xx 502
  ``UPSTREAM_UNAVAILABLE``.
- Tenancy: every scope is re-rooted under ``org:<tenant>/`` (one already there is kept), so
  paths read back carry that prefix. Segments must be ``type:id`` with ids of
  ``[A-Za-z0-9_-]``, at most 31, else 400 ``BAD_REQUEST``.
- An ``Idempotency-Key`` header on a POST is a single-use claim: a claim seen before is
  refused 409 ``CONFLICT`` and nothing is forwarded.
- A repeated ``labels=`` parameter is 400 ``VALIDATION_ERROR``. The answer schema is strict
  (unknown key, or ``answer_instructions: null``: 400).
- ``POST memory/v1/erasures {scope, audit_note}`` answers UNWRAPPED ``{erased, scope, scopes,
  erasure_ids}``; another field is 400 ``UNKNOWN_FIELD``, the tenant root 422
  ``ROOT_ERASURE_REFUSED``. ``DELETE memory`` erases the whole tenant: ``{erased, scopes}``.
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from memeval.servers.fake_cortex import forget as forgetting
from memeval.servers.fake_cortex import ops
from memeval.servers.fake_cortex import recall as recalling
from memeval.servers.fake_cortex.core import Core
from memeval.servers.fake_cortex.faults import Injected
from memeval.servers.fake_cortex.routes import CortexApp, check_bearer
from memeval.servers.fake_cortex.store import within
from memeval.servers.httpjson import Call, HttpError, Reply, retry_after

ANSWER_KEYS = frozenset(
    {
        "scope",
        "question",
        "question_type",
        "question_date",
        "temporal",
        "filters",
        "answer_max_tokens",
        "answer_instructions",
        "cite_sources",
        "include_context",
        "use_pack_id",
    }
)
MAX_SEGMENTS = 31
_SEGMENT = re.compile(r"[a-z]+:[A-Za-z0-9_-]+")
_RELAYED = {404: "NOT_FOUND", 409: "CONFLICT", 413: "PAYLOAD_TOO_LARGE"}


class HostedError(HttpError):
    """An error of the hosted layer itself: status and code are sent as they are."""


def _relay(err: HttpError) -> tuple[int, str]:
    if isinstance(err, HostedError):
        return err.status, err.code
    if err.status in _RELAYED:
        return err.status, _RELAYED[err.status]
    if err.status == 503:
        return 503, "UPSTREAM_UNAVAILABLE"
    if err.status < 500 and err.status not in (401, 403):
        return 400, "BAD_REQUEST"
    return 502, "UPSTREAM_UNAVAILABLE"


def _rate_limited(message: str, wait: float) -> Reply:
    return Reply(429, {"error": {"message": message, "type": "rate_limit_error"}}, retry_after(wait))


class _Limiter:
    """A sliding one-minute window of request times."""

    def __init__(self, per_minute: int):
        self._per_minute = per_minute
        self._times: deque[float] = deque()
        self._lock = threading.Lock()

    def retry_after(self) -> float | None:
        """None when a request may pass now (and counts it), else seconds to wait."""
        if not self._per_minute:
            return None
        now = time.monotonic()
        with self._lock:
            while self._times and now - self._times[0] >= 60:
                self._times.popleft()
            if len(self._times) >= self._per_minute:
                return 60 - (now - self._times[0])
            self._times.append(now)
            return None


class HostedApp(CortexApp):
    """The fake in hosted mode; see the module docstring."""

    def __init__(self, core: Core):
        super().__init__(core)
        self.root = f"org:{core.config.tenant}"
        self._limiter = _Limiter(core.config.hosted_rate_limit)

    def injected_reply(self, injected: Injected) -> Reply:
        """An injected fault: a 429 outside the envelope, anything else as a failure."""
        if injected.status == 429:
            return _rate_limited("injected rate limit", injected.retry_after or 1)
        return Reply(injected.status, _failure("injected fault", injected.error_code), retry_after(injected.retry_after))

    def serve(self, call: Call) -> Reply:
        """Answer a request of the hosted API."""
        try:
            try:
                check_bearer(call, self.core.config.hosted_api_key)
            except HttpError as err:
                raise HostedError(401, "UNAUTHORIZED", err.message) from None
            wait = self._limiter.retry_after()
            if wait is not None:
                limit = self.core.config.hosted_rate_limit
                return _rate_limited(f"rate limit exceeded: {limit} requests per minute", wait)
            route = _ROUTES.get((call.method, call.path))
            if route is None:
                raise HostedError(404, "NOT_FOUND", f"no route /{call.path}")
            self._claim(call)
            return route(self, call)
        except HttpError as err:
            status, code = _relay(err)
            return Reply(status, _failure(err.message, code))

    def _claim(self, call: Call) -> None:
        key = call.header("idempotency-key")
        if call.method != "POST" or not key:
            return
        store = self.core.store
        with store.lock:
            if key in store.claims:
                raise HostedError(409, "CONFLICT", f"idempotency claim {key!r} was already used")
            store.claims.add(key)
            store.save()

    def reroot(self, scope: Any) -> str:
        """``scope`` under the tenant root. Raises HostedError 400 ``BAD_REQUEST``."""
        path = scope.strip("/") if isinstance(scope, str) else ""
        segments = path.split("/")
        if not path or len(segments) > MAX_SEGMENTS or not all(_SEGMENT.fullmatch(s) for s in segments):
            raise HostedError(400, "BAD_REQUEST", f"scope {scope!r} is not a path of type:id segments")
        return path if within(path, self.root) else f"{self.root}/{path}"

    def rerooted(self, call: Call) -> dict[str, Any]:
        """The JSON body with its ``scope`` re-rooted."""
        body = call.json_object()
        return {**body, "scope": self.reroot(body.get("scope"))}


def _ok(data: Any, status: int = 200) -> Reply:
    return Reply(status, {"success": True, "data": data})


def _failure(message: str, code: str) -> dict[str, Any]:
    return {"success": False, "error": message, "errorCode": code}


def _experience(app: HostedApp, call: Call) -> Reply:
    body = ops.check_experience(app.rerooted(call))
    return _ok(ops.append_many(app.core, [body])[0].wire(), 202)


def _events(app: HostedApp, call: Call) -> Reply:
    if len(call.query.get("labels", [])) > 1:
        raise HostedError(400, "VALIDATION_ERROR", "labels must be one comma-separated parameter")
    scope = app.reroot(call.param("scope"))
    return _ok(ops.list_events(app.core, scope, call.param("limit"), call.param("labels"), call.param("cursor")))


def _answer(app: HostedApp, call: Call) -> Reply:
    body = app.rerooted(call)
    unknown = set(body) - ANSWER_KEYS
    if unknown:
        raise HostedError(400, "BAD_REQUEST", f"unknown answer field(s) {', '.join(sorted(unknown))}")
    if "answer_instructions" in body and body["answer_instructions"] is None:
        raise HostedError(400, "BAD_REQUEST", "answer_instructions must be a string; omit it instead of null")
    return _ok(recalling.answer(app.core, body))


def _scopes(app: HostedApp, call: Call) -> Reply:
    prefix = call.param("prefix") or ""
    if prefix and ":" not in prefix:
        raise HostedError(400, "BAD_REQUEST", "prefix must be a scope path, not a bare word")
    root = app.reroot(prefix) if prefix.strip("/") else app.root
    return _ok({"scopes": ops.list_scopes(app.core, root, call.param("limit"))})


def _erase_all(app: HostedApp, call: Call) -> Reply:
    _, scopes = forgetting.erase_tree(app.core, app.root)
    return _ok({"erased": True, "scopes": scopes})


def _erase_scope(app: HostedApp, call: Call) -> Reply:
    body = call.json_object()
    unknown = set(body) - {"scope", "audit_note"}
    if unknown:
        raise HostedError(400, "UNKNOWN_FIELD", f"unknown field(s) {', '.join(sorted(unknown))}")
    raw = body.get("scope")
    scope = app.root if isinstance(raw, str) and not raw.strip("/") else app.reroot(raw)
    if scope == app.root:
        raise HostedError(422, "ROOT_ERASURE_REFUSED", "the tenant root cannot be erased here; use DELETE memory")
    erasure_id, scopes = forgetting.erase_tree(app.core, scope)
    return Reply(200, {"erased": True, "scope": scope, "scopes": scopes, "erasure_ids": [erasure_id]})


_ROUTES: dict[tuple[str, str], Callable[[HostedApp, Call], Reply]] = {
    ("POST", "memory/experience"): _experience,
    ("GET", "memory/events"): _events,
    ("POST", "memory/recall"): lambda app, call: _ok(recalling.recall(app.core, app.rerooted(call))),
    ("POST", "memory/forget"): lambda app, call: _ok(forgetting.forget(app.core, app.rerooted(call))),
    ("POST", "memory/answer"): _answer,
    ("GET", "memory/scopes"): _scopes,
    ("DELETE", "memory"): _erase_all,
    ("POST", "memory/v1/erasures"): _erase_scope,
}
