"""Runtime fault knobs of the fake CortexDB, changeable on a live process.

``POST v1/_fake/faults`` (no auth, never itself faulted, same path in hosted mode) takes::

    {"clear": true,                     # first drop every rule and reset every knob
     "fail": [{"route": "v1/recall", "status": 429, "count": 2,
               "error_code": "RATE_LIMITED", "retry_after": 1}],
     "reset": [{"route": "v1/events", "count": 1}],
     "garble": [{"route": "v1/recall", "mode": "truncated", "count": 1}],
     "hide_listings": false, "expire_packs": false, "storm_every": 0,
     "index_delay": 0.3}

Every key is optional; ``fail``, ``reset`` and ``garble`` rules are appended (a garble rule
spoils an answer that was served: see :class:`~memeval.servers.fake_cortex.config.GarbleRule`). It answers with the current
state, as does ``GET v1/_fake/faults``. A request is checked against reset rules, then fail
rules (first match), then the storm counter; each match uses up one ``count``.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from typing import Any

from memeval.servers.fake_cortex.config import GARBLE_MODES, FailRule, FaultSettings, GarbleRule, ResetRule

CONTROL_PATH = "v1/_fake/faults"

DEFAULT_CODES = {
    401: "UNAUTHORIZED",
    403: "POLICY_DENIED",
    404: "NOT_FOUND",
    408: "WAIT_TIMEOUT",
    409: "CONFLICT",
    429: "RATE_LIMITED",
    500: "INTERNAL",
    502: "BAD_GATEWAY",
    503: "UNAVAILABLE",
    504: "GATEWAY_TIMEOUT",
}


@dataclass(frozen=True)
class Injected:
    """A fault to answer with instead of the route: status, error code, optional Retry-After."""

    status: int
    error_code: str
    retry_after: float | None = None


RESET = "reset"


class Faults:
    """Thread-safe fault state; ``intercept`` is asked once per (non-control) request."""

    def __init__(self, settings: FaultSettings, index_delay: float):
        self._lock = threading.Lock()
        self._initial_delay = index_delay
        self._apply_settings(settings, index_delay)

    def _apply_settings(self, settings: FaultSettings, index_delay: float) -> None:
        self.fail: list[FailRule] = list(settings.fail)
        self.reset: list[ResetRule] = list(settings.reset)
        self.garble: list[GarbleRule] = []
        self.hide_listings = settings.hide_listings
        self.expire_packs = settings.expire_packs
        self.storm_every = settings.storm_every
        self.index_delay = index_delay
        self._seen = 0

    def intercept(self, path: str) -> Injected | str | None:
        """The fault for a request to ``path``: :data:`RESET`, an :class:`Injected`, or None."""
        with self._lock:
            self._seen += 1
            for i, rule in enumerate(self.reset):
                if path.startswith(rule.route):
                    self._use(self.reset, i, rule)
                    return RESET
            for i, fail in enumerate(self.fail):
                if path.startswith(fail.route):
                    self._use(self.fail, i, fail)
                    code = fail.error_code or DEFAULT_CODES.get(fail.status, "FAULT_INJECTED")
                    retry = fail.retry_after if fail.retry_after is not None else _default_retry(fail.status)
                    return Injected(fail.status, code, retry)
            if self.storm_every and self._seen % self.storm_every == 0:
                return Injected(429, "RATE_LIMITED", 1.0)
        return None

    def garbled(self, path: str) -> str | None:
        """The garble mode for a request to ``path`` (one use of the first matching rule), or None."""
        with self._lock:
            for i, rule in enumerate(self.garble):
                if path.startswith(rule.route):
                    self._use(self.garble, i, rule)
                    return rule.mode
        return None

    @staticmethod
    def _use(rules: list[Any], index: int, rule: FailRule | ResetRule | GarbleRule) -> None:
        if rule.count <= 1:
            del rules[index]
        else:
            rules[index] = type(rule)(**{**asdict(rule), "count": rule.count - 1})

    def update(self, body: dict[str, Any]) -> None:
        """Apply a control request body (see the module docstring). Raises ValueError."""
        unknown = set(body) - {"clear", "fail", "reset", "garble", "hide_listings", "expire_packs", "storm_every", "index_delay"}
        if unknown:
            raise ValueError(f"unknown fault keys: {', '.join(sorted(unknown))}")
        fail = [_fail_rule(r) for r in body.get("fail", [])]
        reset = [_reset_rule(r) for r in body.get("reset", [])]
        garble = [_garble_rule(r) for r in body.get("garble", [])]
        with self._lock:
            if body.get("clear"):
                self._apply_settings(FaultSettings(), self._initial_delay)
            self.fail += [r for r in fail if r.count]
            self.reset += [r for r in reset if r.count]
            self.garble += [r for r in garble if r.count]
            self.hide_listings = bool(body.get("hide_listings", self.hide_listings))
            self.expire_packs = bool(body.get("expire_packs", self.expire_packs))
            self.storm_every = _non_negative(body.get("storm_every", self.storm_every), int)
            self.index_delay = _non_negative(body.get("index_delay", self.index_delay), float)

    def snapshot(self) -> dict[str, Any]:
        """The current knobs as JSON."""
        with self._lock:
            return {
                "fail": [asdict(r) for r in self.fail],
                "reset": [asdict(r) for r in self.reset],
                "garble": [asdict(r) for r in self.garble],
                "hide_listings": self.hide_listings,
                "expire_packs": self.expire_packs,
                "storm_every": self.storm_every,
                "index_delay": self.index_delay,
            }


def _default_retry(status: int) -> float | None:
    return 1.0 if status == 429 else None


def _non_negative(value: Any, kind: type) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ValueError(f"expected a non-negative number, got {value!r}")
    return kind(value)


def _fail_rule(raw: Any) -> FailRule:
    if not isinstance(raw, dict) or not isinstance(raw.get("status"), int):
        raise ValueError("a fail rule needs an integer 'status'")
    extra = set(raw) - {"route", "status", "count", "error_code", "retry_after"}
    if extra:
        raise ValueError(f"unknown fail rule keys: {', '.join(sorted(extra))}")
    retry = raw.get("retry_after")
    return FailRule(
        route=str(raw.get("route", "")).lstrip("/"),
        status=raw["status"],
        count=_non_negative(raw.get("count", 1), int),
        error_code=str(raw.get("error_code", "")),
        retry_after=None if retry is None else _non_negative(retry, float),
    )


def _reset_rule(raw: Any) -> ResetRule:
    if not isinstance(raw, dict) or set(raw) - {"route", "count"}:
        raise ValueError("a reset rule is {route, count}")
    return ResetRule(route=str(raw.get("route", "")).lstrip("/"), count=_non_negative(raw.get("count", 1), int))


def _garble_rule(raw: Any) -> GarbleRule:
    if not isinstance(raw, dict) or set(raw) - {"route", "mode", "count"} or raw.get("mode") not in GARBLE_MODES:
        raise ValueError(f"a garble rule is {{route, mode, count}} with mode one of {', '.join(GARBLE_MODES)}")
    return GarbleRule(route=str(raw.get("route", "")).lstrip("/"), mode=raw["mode"],
                      count=_non_negative(raw.get("count", 1), int))


def parse_fail_option(text: str) -> FailRule:
    """``ROUTE:STATUS[:COUNT[:CODE]]`` (command line / ``FAKE_CORTEX_FAIL``). Raises ValueError."""
    parts = text.split(":")
    if not 2 <= len(parts) <= 4 or not all(p.isdecimal() for p in parts[1:3]):
        raise ValueError(f"expected ROUTE:STATUS[:COUNT[:CODE]] with whole numbers, got {text!r}")
    count = int(parts[2]) if len(parts) > 2 else 1
    return FailRule(
        route=parts[0].lstrip("/"), status=int(parts[1]), count=count, error_code=parts[3] if len(parts) > 3 else ""
    )


def parse_reset_option(text: str) -> ResetRule:
    """``ROUTE[:COUNT]`` (command line / ``FAKE_CORTEX_RESET``). Raises ValueError."""
    route, _, count = text.partition(":")
    if count and not count.isdecimal():
        raise ValueError(f"expected ROUTE[:COUNT] with a whole number, got {text!r}")
    return ResetRule(route=route.lstrip("/"), count=int(count) if count else 1)
