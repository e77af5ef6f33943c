"""A mock OpenAI-compatible inference server on 127.0.0.1 (stdlib only).

It stands in for real models the way the original harness's mock did next to a real
CortexDB: deterministic hashed embeddings, empty structured extraction and extractive chat
answers (:mod:`memeval.servers.mock_inference.models`). No auth is checked. Routes match by path
suffix, so any base path works (``/v1``, ``/api/v1``):

- ``GET .../health`` -> ``{"status": "ok"}``; ``GET .../models`` -> ``mock-chat``, ``mock-embed``;
- ``POST .../embeddings``: ``input`` string or list, ``dimensions`` (default 256),
  ``encoding_format`` ``float`` or ``base64`` (little-endian float32, as the openai client asks);
- ``POST .../chat/completions``: ``response_format`` ``json_schema`` -> the schema's smallest
  instance, its top-level arrays of objects filled from the request's capitalised words (a
  MOCK extraction, :func:`memeval.servers.mock_inference.models.schema_instance`), ``json_object`` -> ``{}``, or, for a mem0-style extraction prompt (a ``## New
  Messages`` section), ``{"memory": [{"text": line}, ...]}`` with one memory per message line
  (:func:`memeval.servers.mock_inference.models.object_reply`: a MOCK extraction that copies, never
  understands), a judge-shaped prompt -> ``yes``/``no`` (a word-set
  rule, see :func:`memeval.servers.mock_inference.models.judge_reply`), otherwise the extractive answer;
  no streaming.

Every model response names its model ``mock-chat`` or ``mock-embed`` whatever the request asked
for (a mock says it is one) and carries ``usage`` with an OpenRouter-style ``cost`` of 0: a mock
costs nothing. Test control routes (no auth):

- ``POST /_mock/faults`` ``{"clear": true, "fail": [{"status": 429, "count": 2, "route":
  "chat", "retry_after": 1}], "latency": 0.2}``: the next ``count`` calls of ``route``
  (``chat`` or ``embeddings``) fail with an OpenAI-style error body; ``latency`` seconds are
  added to every model call. Both apply to requests that arrive after the change: a call is
  given its latency and its fault (if any) when it arrives, before it sleeps. Answers the current state, as does ``GET /_mock/faults``.
- ``GET /_mock/stats`` -> ``{"calls": {"chat": n, "embeddings": n, "models": n, "health": n}}``
  (every request received, failed ones included); ``DELETE /_mock/stats`` zeroes it.

Run ``python -m memeval.servers.mock_inference --port 0 [--latency S] [--fail STATUS[:COUNT[:ROUTE]]]``;
it prints ``mock-inference listening on http://127.0.0.1:PORT``.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import struct
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from memeval.servers.mock_inference import models
from memeval.servers.httpjson import (Call, HttpError, JsonHTTPServer, Reply, option_type, port, retry_after,
                                      run_in_foreground, seconds)

NAME = "mock-inference"
MODEL_ROUTES = ("chat", "embeddings")
ERRORS = {
    400: ("Invalid request", "invalid_request_error", "invalid_request"),
    401: ("Incorrect API key provided", "invalid_request_error", "invalid_api_key"),
    402: ("Insufficient credits", "insufficient_quota", "insufficient_credits"),
    403: ("This model is not available to this key", "permission_error", "forbidden"),
    429: ("Rate limit reached", "rate_limit_error", "rate_limit_exceeded"),
    404: ("Not found", "invalid_request_error", "not_found"),
    405: ("Method not allowed", "invalid_request_error", "method_not_allowed"),
    500: ("The server had an error while processing your request", "server_error", "internal_error"),
}


def error_body(status: int, message: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error body for ``status``."""
    default, kind, code = ERRORS.get(status, ("Injected failure", "server_error", str(status)))
    return {"error": {"message": message or default, "type": kind, "param": None, "code": code}}


class MockFaults:
    """Injected failures and latency; thread-safe."""

    def __init__(self, fail: Sequence[dict[str, Any]] = (), latency: float = 0.0):
        self._lock = threading.Lock()
        self._fail: list[dict[str, Any]] = []
        self.latency = latency
        self.update({"fail": list(fail)})

    def update(self, body: dict[str, Any]) -> None:
        """Apply a ``POST /_mock/faults`` body. Raises ValueError."""
        if set(body) - {"clear", "fail", "latency"}:
            raise ValueError("fault keys are clear, fail and latency")
        rules = [_rule(r) for r in body.get("fail", [])]
        latency = body.get("latency", 0.0 if body.get("clear") else self.latency)
        if not isinstance(latency, int | float) or not math.isfinite(latency) or latency < 0:
            raise ValueError("latency must be a non-negative number")
        with self._lock:
            if body.get("clear"):
                self._fail = []
            self._fail += rules
            self.latency = float(latency)

    def take(self, route: str) -> dict[str, Any] | None:
        """The failure for a call of ``route``, using it up, or None."""
        with self._lock:
            for rule in self._fail:
                if rule["route"] == route:
                    rule["count"] -= 1
                    if rule["count"] <= 0:
                        self._fail.remove(rule)
                    return dict(rule)
        return None

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {"fail": [dict(r) for r in self._fail], "latency": self.latency}


def _rule(raw: Any) -> dict[str, Any]:
    if (
        not isinstance(raw, dict)
        or not isinstance(raw.get("status"), int)
        or set(raw) - {"status", "count", "route", "retry_after"}
    ):
        raise ValueError("a fail rule is {status, count, route, retry_after}")
    route = raw.get("route", "chat")
    count = raw.get("count", 1)
    if route not in MODEL_ROUTES or not isinstance(count, int) or count < 1:
        raise ValueError(f"route must be one of {', '.join(MODEL_ROUTES)} and count a positive integer")
    retry = raw.get("retry_after", 1 if raw["status"] == 429 else None)
    if retry is not None and (not isinstance(retry, int | float) or not math.isfinite(retry) or retry < 0):
        raise ValueError("retry_after must be a non-negative number of seconds")
    return {"status": raw["status"], "count": count, "route": route, "retry_after": retry}


def parse_fail_option(text: str) -> dict[str, Any]:
    """``STATUS[:COUNT[:ROUTE]]`` from the command line. Raises ValueError."""
    parts = text.split(":")
    if not 1 <= len(parts) <= 3 or not all(p.isdecimal() for p in parts[:2]):
        raise ValueError(f"expected STATUS[:COUNT[:ROUTE]] with whole numbers, got {text!r}")
    rule: dict[str, Any] = {"status": int(parts[0]), "count": int(parts[1]) if len(parts) > 1 else 1}
    if len(parts) > 2:
        rule["route"] = parts[2]
    return _rule(rule)


def _route_name(path: str) -> str | None:
    for suffix, name in (
        ("chat/completions", "chat"),
        ("embeddings", "embeddings"),
        ("models", "models"),
        ("health", "health"),
    ):
        if path == suffix or path.endswith("/" + suffix):
            return name
    return None


class MockInferenceApp:
    """The mock inference server's app; see the module docstring."""

    def __init__(self, faults: MockFaults):
        self.faults = faults
        self._stats: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._next_id = 0

    def handle(self, call: Call) -> Reply:
        """Answer one request."""
        if call.path == "_mock/faults":
            return self._control(call)
        if call.path == "_mock/stats":
            return self._stats_reply(call)
        name = _route_name(call.path)
        if name is None:
            return Reply(404, error_body(404, f"no route /{call.path}"))
        with self._lock:
            self._stats[name] += 1
        if name == "health":
            return Reply(200, {"status": "ok"})
        if name == "models":
            data = [{"id": models.CHAT_MODEL, "object": "model"}, {"id": models.EMBED_MODEL, "object": "model"}]
            return Reply(200, {"object": "list", "data": data})
        return self._model_call(name, call)

    def _model_call(self, name: str, call: Call) -> Reply:
        if call.method != "POST":
            return Reply(405, error_body(405, f"{call.method} is not allowed"))
        # Latency and fault are both decided as the request arrives: a request still sleeping
        # when a client clears the faults and sets new ones must not use up a fault meant for
        # requests sent after it.
        latency, fault = self.faults.latency, self.faults.take(name)
        if latency:
            time.sleep(latency)
        if fault is not None:
            return Reply(fault["status"], error_body(fault["status"]), retry_after(fault["retry_after"]))
        try:
            body = call.json_object()
            return Reply(200, self._chat(body) if name == "chat" else embeddings(body))
        except HttpError as err:
            return Reply(400, error_body(400, err.message))

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self._next_id += 1
            number = self._next_id
        return chat_completion(body, f"chatcmpl-mock-{number}")

    def _control(self, call: Call) -> Reply:
        if call.method == "POST":
            try:
                self.faults.update(call.json_object())
            except (ValueError, HttpError) as err:
                return Reply(400, error_body(400, str(err)))
        return Reply(200, self.faults.snapshot())

    def _stats_reply(self, call: Call) -> Reply:
        with self._lock:
            if call.method == "DELETE":
                self._stats.clear()
            calls = {name: self._stats.get(name, 0) for name in ("chat", "embeddings", "models", "health")}
        return Reply(200, {"calls": calls})


def _usage(prompt: int, completion: int) -> dict[str, Any]:
    total = prompt + completion
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": total,
        "cost": 0.0,  # a mock costs nothing, and says so
    }


def chat_completion(body: dict[str, Any], completion_id: str) -> dict[str, Any]:
    """A ``chat.completion`` object for a request body. Raises HttpError 400 on a bad body."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise HttpError(400, "invalid_request_error", "messages must be a non-empty list")
    if body.get("stream"):
        raise HttpError(400, "invalid_request_error", "the mock does not stream")
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema", {})
        content = json.dumps(models.schema_instance(schema, models.subject_text(messages)))
    elif fmt.get("type") == "json_object":
        content = json.dumps(models.object_reply(messages))
    else:
        content = models.judge_reply(messages) or models.extractive_reply(messages)
    prompt = sum(models.approx_tokens(models.message_text(m)) for m in messages)
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": models.CHAT_MODEL,  # whatever was asked for: a mock says it is one
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": _usage(prompt, models.approx_tokens(content)),
    }


def embeddings(body: dict[str, Any]) -> dict[str, Any]:
    """An embeddings list for a request body. Raises HttpError 400 on a bad body."""
    raw = body.get("input")
    inputs = [raw] if isinstance(raw, str) else raw
    if not isinstance(inputs, list) or not inputs:
        raise HttpError(400, "invalid_request_error", "input must be a string or a non-empty list")
    dims = body.get("dimensions") or models.DEFAULT_DIMS
    if not isinstance(dims, int) or not 1 <= dims <= 65536:
        raise HttpError(400, "invalid_request_error", "dimensions must be a positive integer")
    texts = [item if isinstance(item, str) else json.dumps(item) for item in inputs]
    as_base64 = body.get("encoding_format") == "base64"
    data = []
    for i, text in enumerate(texts):
        vector: Any = models.embed(text, dims)
        if as_base64:
            vector = base64.b64encode(struct.pack(f"<{dims}f", *vector)).decode()
        data.append({"object": "embedding", "index": i, "embedding": vector})
    tokens = sum(models.approx_tokens(t) for t in texts)
    usage = _usage(tokens, 0)
    del usage["completion_tokens"]
    return {"object": "list", "data": data, "model": models.EMBED_MODEL, "usage": usage}


def make_server(host: str = "127.0.0.1", port: int = 0, faults: MockFaults | None = None) -> JsonHTTPServer:
    """A bound, not yet serving, mock inference server. Raises OSError when the port is taken."""
    return JsonHTTPServer((host, port), MockInferenceApp(faults or MockFaults()))


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Run the server in the foreground until SIGTERM/SIGINT; 0, or 3 when it cannot bind."""
    parser = argparse.ArgumentParser(prog=prog, description="Mock OpenAI-compatible inference server.")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=port, default=0, help="port to bind; 0 picks a free one (default)")
    parser.add_argument("--latency", type=seconds, default=0.0, help="seconds added to every model call")
    parser.add_argument(
        "--fail",
        action="append",
        type=option_type(parse_fail_option),
        default=[],
        metavar="STATUS[:COUNT[:ROUTE]]",
        help="fail the next COUNT calls of ROUTE (chat|embeddings, default chat); repeatable",
    )
    ns = parser.parse_args(sys.argv[1:] if argv is None else list(argv))
    faults = MockFaults(ns.fail, ns.latency)
    return run_in_foreground(NAME, ns.host, ns.port, lambda: make_server(ns.host, ns.port, faults))
