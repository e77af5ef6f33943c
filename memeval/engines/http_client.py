"""HTTP plumbing shared by the HTTP engine adapters: retries, backoff, pacing, error mapping.

Every request goes through :meth:`HttpClient.call`, which

- sends ``Authorization: Bearer <key>``; the key lives in a :class:`Secret` and is never put in
  a log record, an exception, a repr or ``EngineInfo.settings``;
- retries according to the call's :class:`Retry` class, at most ``attempts`` times (six for
  ``503 AUTHORIZATION_STATE_CHANGED``), sleeping ``retry_base_s * 2**n`` between attempts, or
  the server's numeric ``Retry-After`` / ``RateLimit-Reset`` on 429 and 503 (capped at 10 s);
- optionally paces requests to ``requests_per_minute`` (a hosted API's rate limit);
- gives each attempt a wall-clock deadline of ``timeout_s`` (httpx's own timeouts are per read,
  so a server trickling one byte a second would never be cut off): the request runs in a daemon
  thread and the caller stops waiting at the deadline;
- stops waiting at once for every request in flight when
  :func:`memeval.engines.cancel.cancel_requests` is called (the
  Ctrl-C handler), and gives the requests after it (a scenario's cleanup) :data:`memeval.engines.cancel.GRACE_S` in all;
- accepts a 2xx answer only when its body is empty or JSON (a ``text/html`` page or a body cut
  short is an engine error, never an empty result);
- turns every failure into an :class:`memeval.errors.EngineError` with a one-line reason that
  names the adapter, the route and the status: :class:`HttpStatusError` for a non-2xx answer,
  a plain ``EngineError`` for a transport failure.

Log records (logger ``memeval.engines.http``) carry method, route, status, time and attempt,
never headers or bodies.
"""

from __future__ import annotations

import ipaddress
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields
from enum import Enum
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from memeval.engines.cancel import CANCEL
from memeval.errors import EngineError, UsageError
from memeval.util.suggest import did_you_mean
from memeval.secrets import is_secret, mask, remember

log = logging.getLogger("memeval.engines.http")

TRANSIENT = frozenset({408, 429, 500, 502, 503, 504})
REFUSED = frozenset({429, 503})
MAX_SERVER_DELAY_S = 10.0
STATE_CHANGED = "AUTHORIZATION_STATE_CHANGED"
STATE_CHANGED_ATTEMPTS = 6
REASON_CHARS = 200
POLL_S = 0.05


class Secret:
    """A credential that never shows itself: ``repr`` and ``str`` are masked, and its value is
    known to :func:`memeval.secrets.mask`, so it is masked wherever else it would appear."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value
        remember([value])

    def reveal(self) -> str:
        """The credential itself, for the Authorization header only."""
        return self._value

    def __repr__(self) -> str:
        return "Secret(***)"

    __str__ = __repr__




def masked(values: Mapping[str, Any]) -> dict[str, str]:
    """``values`` as strings, fit for run.json: the value of every secret (by its name, such as
    ``…_APIKEY`` or ``…_PASSWORD``, or a URL with user info) shown as ``***``, and known secrets
    masked in the others. For what a server reports about itself (its flags)."""
    return {str(k): "***" if str(v) and is_secret(str(k), v) else mask(str(v)) for k, v in values.items()}


@dataclass(frozen=True)
class HttpSettings:
    """An HTTP adapter's settings (engine YAML ``settings`` plus overrides). Times in seconds.

    ``url``: the base URL; cleartext ``http://`` only to a loopback host unless ``allow_http``.
    ``attempts``: tries per request; ``retry_base_s``: first backoff delay, doubled per retry.
    ``requests_per_minute``: pace requests (0 = no pacing). ``concurrency``: parallel requests
    of one recall or inspection. ``lookup_timeout_s``: how long to look for a write whose outcome
    is unknown.
    """

    url: str
    timeout_s: float = 60.0
    connect_timeout_s: float = 10.0
    attempts: int = 3
    retry_base_s: float = 0.25
    requests_per_minute: float = 0.0
    concurrency: int = 4
    allow_http: bool = False
    lookup_timeout_s: float = 30.0

    def public(self) -> dict[str, Any]:
        """The settings for ``EngineInfo.settings``: no credentials (user info is cut from the URL)."""
        parts = urlsplit(self.url)
        return {**asdict(self), "url": urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))}


def http_settings(adapter: str, settings: Mapping[str, Any], url_env: str, environ: Mapping[str, str],
                  default_url: str | None = None) -> HttpSettings:
    """Settings from an engine definition; the URL from ``settings.url``, else ``environ[url_env]``,
    else ``default_url``.

    Raises:
        UsageError: an unknown setting, a value of the wrong type, no URL, or cleartext HTTP to a
            host that is not loopback (without ``allow_http``).
    """
    known = {f.name: f for f in fields(HttpSettings)}
    for name in settings:
        if name not in known:
            raise UsageError(f"{adapter}: unknown setting {name!r}{did_you_mean(name, known)}")
    url = str(settings.get("url") or environ.get(url_env) or default_url or "")
    if not url:
        raise UsageError(f"{adapter}: no server URL; set {url_env} or settings.url")
    values: dict[str, Any] = {"url": url}
    for name, value in settings.items():
        if name == "url":
            continue
        kind = type(getattr(HttpSettings, name))
        if isinstance(value, bool) != (kind is bool) or not isinstance(value, (int, float)) or value < 0:
            raise UsageError(f"{adapter}: setting {name} must be a non-negative {kind.__name__}, not {value!r}")
        values[name] = kind(value)
    result = HttpSettings(**values)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"{adapter}: the server URL must start with http:// or https:// (settings.url or {url_env})")
    if parts.scheme == "http" and not result.allow_http and not _loopback(parts.hostname):
        raise UsageError(f"{adapter}: cleartext http:// only to a loopback host (set allow_http: true to override)")
    return result


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Retry(Enum):
    """When a request may be sent again.

    ``READ``: any transient status (408/429/5xx) or transport failure; for reads and for writes
    whose body carries an idempotency key (a resend is a replay that stores nothing).
    ``ONCE``: only when the server certainly did not act: 429, 503, or a connection that was
    never made. A timeout or a 500 after sending leaves the outcome unknown, so it is raised.
    """

    READ = "read"
    ONCE = "once"


class HttpStatusError(EngineError):
    """A non-2xx answer after the retries allowed. ``attempts`` is how many were sent."""

    def __init__(self, reason: str, status: int, code: str, attempts: int):
        super().__init__(reason)
        self.status, self.code, self.attempts = status, code, attempts


class EnvelopeFailure(Exception):
    """Raised by a ``decode`` hook for a body that reports failure inside a 2xx answer."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


def error_fields(body: Any) -> tuple[str, str]:
    """(code, message) of an error body: ``{error_code, message}``, ``{error, errorCode}`` or
    ``{error: {message, type}}``; empty strings where the body says nothing."""
    if not isinstance(body, dict):
        return "", ""
    error = body.get("error")
    if isinstance(error, dict):
        return str(error.get("code") or error.get("type") or ""), str(error.get("message") or "")
    code = body.get("error_code") or body.get("errorCode") or body.get("code") or ""
    message = body.get("message") or (error if isinstance(error, str) else "") or ""
    return str(code), str(message)


class HttpClient:
    """One base URL, one bearer key, the retry rules above. Thread-safe.

    ``name`` prefixes every error (``cortex POST v1/recall: ...``); ``key_env`` names the
    variable to check on 401/403. ``decode`` turns a 2xx JSON body into the caller's value (e.g.
    unwraps an envelope) and may raise :class:`EnvelopeFailure`.
    """

    def __init__(self, name: str, settings: HttpSettings, key: Secret, key_env: str,
                 decode: Callable[[Any], Any] = lambda body: body):
        self.name, self.key_env = name, key_env
        self.attempts, self.base_delay_s = max(1, settings.attempts), settings.retry_base_s
        self._key, self._decode = key, decode
        self.timeout_s = settings.timeout_s
        timeout = httpx.Timeout(settings.timeout_s, connect=settings.connect_timeout_s)
        self._http = httpx.Client(base_url=settings.url.rstrip("/") + "/", timeout=timeout)
        rate = settings.requests_per_minute
        self._pace_s = 60.0 / rate if rate > 0 else 0.0
        self._pace_lock = threading.Lock()
        self._next_slot = 0.0

    def __repr__(self) -> str:
        return f"HttpClient({self.name!r}, {str(self._http.base_url)!r})"

    def call(self, method: str, route: str, *, params: Mapping[str, Any] | None = None, json: Any = None,
             headers: Mapping[str, str] | None = None, retry: Retry = Retry.READ) -> Any:
        """Send one request with retries; the decoded body of the 2xx answer (None when empty).

        Raises:
            HttpStatusError: a non-2xx answer (or an envelope failure) after the allowed retries.
            EngineError: a transport failure (refused, reset, timeout) after the allowed retries.
        """
        where = f"{self.name} {method} {route}"
        attempt = 0
        while True:
            attempt += 1
            self._pace()
            start = time.perf_counter()
            try:
                response = self._send_within(where, method, route, params, json, headers)
            except httpx.TransportError as err:
                reason = f"{where}: {type(err).__name__}: {self._line(str(err)) or 'no response'}"
                if not _may_resend(err, retry):
                    raise EngineError(f"{reason}; the outcome is unknown") from None
                if attempt >= self.attempts:
                    raise EngineError(reason + _after(attempt)) from None
                self._wait(reason, attempt, self._backoff(attempt))
                continue
            log.debug("%s -> %s in %.0f ms (attempt %d)", where, response.status_code, _ms(start), attempt)
            try:
                return self._body(where, response, attempt)
            except HttpStatusError as err:
                limit = STATE_CHANGED_ATTEMPTS if err.code == STATE_CHANGED else self.attempts
                allowed = TRANSIENT if retry is Retry.READ else REFUSED
                if attempt >= limit or err.status not in allowed:
                    raise HttpStatusError(str(err) + _after(attempt), err.status, err.code, attempt) from None
                self._wait(str(err), attempt, self._delay(response, attempt))

    def close(self) -> None:
        """Close pooled connections."""
        self._http.close()

    def _send_within(self, where: str, method: str, route: str, params: Mapping[str, Any] | None, body: Any,
                     headers: Mapping[str, str] | None) -> httpx.Response:
        """:meth:`_send` in a daemon thread, waited for until the attempt's wall-clock deadline.

        Raises:
            httpx.ReadTimeout: no complete answer by the deadline (the thread is abandoned).
            EngineError: cancelled by :func:`~memeval.engines.cancel.cancel_requests`, or the grace after it is over.
        """
        generation = CANCEL.generation
        deadline = CANCEL.deadline(time.monotonic() + self.timeout_s)
        if deadline <= time.monotonic():
            raise EngineError(f"{where}: not sent: the run was interrupted")
        outcome: list[httpx.Response | BaseException] = []
        done = threading.Event()

        def send() -> None:
            try:
                outcome.append(self._send(method, route, params, body, headers))
            except BaseException as err:  # handed to the waiting caller
                outcome.append(err)
            finally:
                done.set()

        threading.Thread(target=send, name=f"memeval-{self.name}-request", daemon=True).start()
        while not done.wait(POLL_S):
            if CANCEL.generation != generation:
                raise EngineError(f"{where}: cancelled: the run was interrupted")
            if time.monotonic() >= deadline:
                raise httpx.ReadTimeout(f"no complete answer within {self.timeout_s:g} s")
        answer = outcome[0]
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def _send(self, method: str, route: str, params: Mapping[str, Any] | None, body: Any,
              headers: Mapping[str, str] | None) -> httpx.Response:
        sent = {"Authorization": f"Bearer {self._key.reveal()}", "Accept": "application/json", **(headers or {})}
        return self._http.request(method, route.lstrip("/"), params=params, json=body, headers=sent)

    def _body(self, where: str, response: httpx.Response, attempt: int) -> Any:
        status = response.status_code
        try:
            body = response.json() if response.content else None
        except ValueError:
            if 200 <= status < 300:
                raise EngineError(f"{where}: {status} but the answer is not JSON ({_kind(response)})") from None
            body = None
        if not 200 <= status < 300:
            code, message = error_fields(body)
            raise self._status_error(where, status, code, message or response.reason_phrase, attempt)
        try:
            return self._decode(body)
        except EnvelopeFailure as failure:
            raise self._status_error(where, status, failure.code, failure.message, attempt) from None

    def _status_error(self, where: str, status: int, code: str, message: str, attempt: int) -> HttpStatusError:
        code = self._line(code)  # a server may echo the request (its Authorization header) in the code
        detail = " ".join(part for part in (str(status), code) if part)
        line = self._line(message)
        reason = f"{where}: {detail}" + (f" ({line})" if line and line != code else "")
        if status in (401, 403):
            reason += f"; unauthorized (check {self.key_env})"
        return HttpStatusError(reason, status, code, attempt)

    def _line(self, text: str) -> str:
        return " ".join(mask(text).split())[:REASON_CHARS]

    def _backoff(self, attempt: int) -> float:
        return float(self.base_delay_s * 2 ** (attempt - 1))

    def _delay(self, response: httpx.Response, attempt: int) -> float:
        if response.status_code in REFUSED:
            for header in ("Retry-After", "RateLimit-Reset"):
                try:
                    return min(max(float(response.headers.get(header, "")), 0.0), MAX_SERVER_DELAY_S)
                except ValueError:
                    continue
        return self._backoff(attempt)

    @staticmethod
    def _wait(reason: str, attempt: int, delay: float) -> None:
        if CANCEL.until is not None and CANCEL.until < time.monotonic() + delay:
            raise EngineError(f"{reason}; not retried: the run was interrupted")
        log.warning("%s; retry %d in %.2f s", reason, attempt + 1, delay)
        time.sleep(delay)

    def _pace(self) -> None:
        if not self._pace_s:
            return
        with self._pace_lock:
            now = time.monotonic()
            slot = max(now, self._next_slot)
            self._next_slot = slot + self._pace_s
        if slot > now:
            time.sleep(slot - now)


def _may_resend(err: httpx.TransportError, retry: Retry) -> bool:
    never_sent = isinstance(err, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout))
    return retry is Retry.READ or never_sent


def _kind(response: httpx.Response) -> str:
    """What a 2xx body that is not JSON looks like, for the error: its type, or "cut short"."""
    kind = response.headers.get("content-type", "").split(";")[0].strip()
    return f"{kind or 'no content type'}, {len(response.content)} bytes" if "json" not in kind else \
        f"cut short or malformed, {len(response.content)} bytes"


def _after(attempts: int) -> str:
    return f" after {attempts} attempts" if attempts > 1 else ""


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0
