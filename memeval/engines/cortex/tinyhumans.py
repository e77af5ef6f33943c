"""The ``tinyhumans`` engine: CortexDB behind the hosted TinyHumans API (wire notes section 4).

Configuration: ``settings.url`` or ``TINYHUMANS_API_URL`` (default ``https://api.tinyhumans.ai``);
the bearer key from ``TINYHUMANS_API_KEY``, required, never from settings. Same scope and event
layout as :mod:`memeval.engines.cortex.adapter`, with the hosted differences:

- routes ``memory/*``; answers come in ``{success, data}`` (unwrapped here; ``{success: false,
  error, errorCode}`` is an EngineError naming the code); the rate limiter's 429 comes outside
  the envelope; scoped erasures answer unwrapped;
- scope paths read back carry the caller's ``org:<id>/`` prefix, which is cut off;
- writes, answers and forgets carry an ``Idempotency-Key`` claim, fresh per logical call and
  reused by its retries. The server refuses a claim it has seen with 409 and forwards nothing,
  so a 409 on a retried write leaves the outcome unknown: the adapter then looks for the event
  by its item label for ``lookup_timeout_s``. A 404 on a retried forget means it was done;
- no admin routes: the adapter implements ``forget``, ``erase`` and ``answer`` only (no usage,
  backlog, inspection or belief builds; the executor waits a fixed ``enrich_wait_s`` instead).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from memeval.engines.cortex import layout
from memeval.engines.base import Adapter, MemoryItem
from memeval.engines.cortex.adapter import AUDIT_NOTE, CortexBase
from memeval.engines.http_client import TRANSIENT, EnvelopeFailure, HttpStatusError, Secret, http_settings
from memeval.errors import EngineError, UsageError

URL_ENV, KEY_ENV, DEFAULT_URL = "TINYHUMANS_API_URL", "TINYHUMANS_API_KEY", "https://api.tinyhumans.ai"
CLAIMED = frozenset({"memory/experience", "memory/answer", "memory/forget"})
LOOKUP_FIRST_S, LOOKUP_MAX_S = 0.25, 2.0


def create(settings: Mapping[str, Any]) -> "TinyHumansEngine":
    """The factory of the ``tinyhumans`` adapter.

    Raises:
        UsageError: ``TINYHUMANS_API_KEY`` is not set, or a setting is bad.
    """
    config = http_settings("tinyhumans", settings, URL_ENV, os.environ, DEFAULT_URL)
    key = os.environ.get(KEY_ENV)
    if not key:
        raise UsageError(f"tinyhumans: set {KEY_ENV} (an API key); it is never read from the engine file")
    return TinyHumansEngine(config, Secret(key), unwrap)


def unwrap(body: Any) -> Any:
    """The ``data`` of a ``{success, data}`` envelope; a body without one as it is.

    Raises:
        EnvelopeFailure: ``success`` is false.
    """
    if isinstance(body, dict) and "success" in body:
        if body.get("success") is False:
            raise EnvelopeFailure(str(body.get("errorCode") or ""), str(body.get("error") or ""))
        return body.get("data")
    return body


class TinyHumansEngine(CortexBase):
    """The hosted dialect of :class:`~memeval.engines.cortex.adapter.CortexBase` (see the module docstring)."""

    name = "tinyhumans"
    key_env = KEY_ENV
    routes = {"experience": "memory/experience", "events": "memory/events", "recall": "memory/recall",
              "answer": "memory/answer", "forget": "memory/forget"}

    def _headers(self, route: str) -> dict[str, str]:
        return {"Idempotency-Key": f"memeval-{uuid.uuid4().hex}"} if route in CLAIMED else {}

    def _append(self, body: dict[str, Any], item: MemoryItem) -> dict[str, Any]:
        try:
            return super()._append(body, item)
        except HttpStatusError as err:
            if err.status != 409 or err.attempts < 2:
                raise
            return self._find_written(body["scope"], item, err)

    def _find_written(self, scope: str, item: MemoryItem, refused: HttpStatusError) -> dict[str, Any]:
        """The receipt of a write whose retry was refused, once its event is listed."""
        deadline = time.monotonic() + self.settings.lookup_timeout_s
        pause = LOOKUP_FIRST_S
        while True:
            try:
                for event in self._walk(scope, labels=layout.item_label(item.id)):
                    found = layout.item_of(event, item.tenant)
                    if found is not None and found.id == item.id:
                        return {"event_id": event.get("id"), "replayed_from_idempotency": False}
            except EngineError as err:
                if isinstance(err, HttpStatusError) and err.status not in TRANSIENT:
                    raise
                # 429, 5xx or a dropped connection while looking: not yet
            if time.monotonic() + pause > deadline:
                raise EngineError(f"{refused}; outcome unknown: not listed after {self.settings.lookup_timeout_s:g} s")
            time.sleep(pause)
            pause = min(pause * 2, LOOKUP_MAX_S)

    def _listed_scopes(self, tenant: str) -> Sequence[str]:
        params = {"prefix": layout.tenant_root(tenant), "limit": 1000}
        body = self._call_unless(404, "GET", "memory/scopes", params=params)
        scopes = body.get("scopes") if body is not None else []
        if not isinstance(scopes, list):
            raise layout.ShapeError(f"{self.name} GET memory/scopes: the answer holds no list under 'scopes'")
        paths = [s.get("path") if isinstance(s, dict) else s for s in scopes]
        if not all(isinstance(p, str) and p for p in paths):  # str() made a missing path the scope "None"
            raise layout.ShapeError(f"{self.name} GET memory/scopes: a scope without a path ({scopes!r:.120})")
        return [str(p) for p in paths]

    def _erase_scope(self, scope: str) -> None:
        receipt = self._call_unless(404, "POST", "memory/v1/erasures", json={"scope": scope, "audit_note": AUDIT_NOTE})
        if receipt is not None and receipt.get("erased") is not True:
            raise EngineError(f"{self.name} erasure of {scope}: not erased ({receipt!r:.120})")

    def _forget_chunk(self, scope: str, event_ids: Sequence[str]) -> int:
        try:
            return super()._forget_chunk(scope, event_ids)
        except HttpStatusError as err:
            if err.attempts < 2 or err.status not in (404, 409):
                raise
            # 404 on a retry: the first attempt forgot them; 409: the claim was refused, try anew.
            return 0 if err.status == 404 else super()._forget_chunk(scope, event_ids)


ADAPTER = Adapter(create, URL_ENV, concurrent=True, keys=(KEY_ENV,))
"""The ``tinyhumans`` entry point."""
