"""A fake CortexDB on 127.0.0.1 for memeval's own adapter tests and flag sweeps.

It follows the documented wire semantics (``reference/cortexdb-wire.md``): 202 receipts that
become readable only after ``index_delay``, doubled newest-first listings with an offset
cursor, idempotent replay and 409, recall packs that expire and die on any forget, the
forget and erasure traps, enrichment deriving facts in the background, belief building with
contested claims and conflicts (503 when ``CORTEX_BITEMPORAL_MODE=off``), usage with fake
prices, the ``CORTEX_*`` flags reported by ``v1/admin/version``, fault knobs, and the hosted
TinyHumans shape (``--hosted``). It does NOT model retrieval quality: ranking counts query
keywords (:mod:`memeval.servers.fake_cortex.recall`) and answers are extractive.

Run::

    python -m memeval.servers.fake_cortex --port 0 [--hosted] [--index-delay S] [--data FILE]

It prints ``fake-cortex listening on http://127.0.0.1:PORT`` once ready and serves until
SIGTERM or SIGINT. Every option also has an environment default (see ``--help``); keys come
from ``CORTEX_API_KEY`` (direct) and ``TINYHUMANS_API_KEY`` (hosted). Fault knobs can be
changed on the live process through ``POST v1/_fake/faults``
(:mod:`memeval.servers.fake_cortex.faults`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from memeval.servers.fake_cortex.config import (
    CAPABILITIES,
    DEFAULT_API_KEY,
    DEFAULT_HOSTED_KEY,
    FakeCortexConfig,
    FaultSettings,
    flags_from_env,
)
from memeval.servers.fake_cortex.core import Core
from memeval.servers.fake_cortex.faults import Faults, parse_fail_option, parse_reset_option
from memeval.servers.fake_cortex.routes import CortexApp
from memeval.servers.fake_cortex.store import Store
from memeval.servers.fake_cortex.hosted import HostedApp
from memeval.servers.httpjson import JsonHTTPServer, count, option_type, port, run_in_foreground, seconds

NAME = "fake-cortex"


def make_server(host: str = "127.0.0.1", port: int = 0, config: FakeCortexConfig | None = None) -> JsonHTTPServer:
    """A bound, not yet serving, fake CortexDB; its enrichment worker already runs.

    Call ``serve_forever()`` (in a thread, for in-process use), then ``shutdown()`` and
    ``server_close()``, which stops the worker and writes the state file. Raises ValueError
    when ``config.data_file`` cannot be read or is not a state file, OSError when the port is
    taken (the worker is stopped by then).
    """
    config = config or FakeCortexConfig()
    core = Core(config, Store.load(config.data_file), Faults(config.faults, config.index_delay))
    app = HostedApp(core) if config.hosted else CortexApp(core)
    return JsonHTTPServer((host, port), app)


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


# flag, environment variable, type, default, help
_OPTIONS: tuple[tuple[str, str, Callable[[str], Any], str | None, str], ...] = (
    ("--tenant", "FAKE_CORTEX_TENANT", str, "local", "hosted tenant: scopes go under org:TENANT/"),
    ("--index-delay", "FAKE_CORTEX_INDEX_DELAY", seconds, "0.3", "seconds from accepted to visible"),
    ("--wait-cap", "FAKE_CORTEX_WAIT_CAP", seconds, "5", "longest ?wait=indexed wait before 408, seconds"),
    ("--pack-ttl", "FAKE_CORTEX_PACK_TTL", seconds, "60", "seconds a recall pack lives"),
    ("--enrich-delay", "FAKE_CORTEX_ENRICH_DELAY", seconds, "0.05", "seconds per enrichment job"),
    ("--latency", "FAKE_CORTEX_LATENCY", seconds, "0", "seconds each request waits before its answer"),
    ("--jitter", "FAKE_CORTEX_JITTER", seconds, "0", "plus or minus up to this much, uniform and seeded (never below 0)"),
    ("--hosted-rate-limit", "FAKE_CORTEX_HOSTED_RATE_LIMIT", count, "300", "hosted requests per minute; 0 = no limit"),
    ("--capabilities", "FAKE_CORTEX_CAPABILITIES", str, ",".join(CAPABILITIES), "comma-separated capabilities"),
    ("--data", "FAKE_CORTEX_DATA", Path, None, "JSON state file kept across restarts"),
    ("--storm-every", "FAKE_CORTEX_STORM_EVERY", count, "0", "answer every K-th request 429; 0 = off"),
    ("--wire", "FAKE_CORTEX_WIRE", str, "0.10", "recall wire: 0.10, or 0.12 (diagnostics, context_block)"),
)
_SWITCHES = (
    ("--hosted", "FAKE_CORTEX_HOSTED", "serve the hosted TinyHumans memory/* API instead of v1/*"),
    ("--hide-listings", "FAKE_CORTEX_HIDE_LISTINGS", "events never become visible"),
    ("--expire-packs", "FAKE_CORTEX_EXPIRE_PACKS", "every pack is expired when an answer asks for it"),
)


def build_parser(environ: Mapping[str, str], prog: str | None = None) -> argparse.ArgumentParser:
    """The command line; every default comes from ``environ`` (``FAKE_CORTEX_*``) first."""
    p = argparse.ArgumentParser(prog=prog, description="Fake CortexDB loopback server (keyword ranking only).")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=port, default=0, help="port to bind; 0 picks a free one (default)")
    for flag, env, kind, default, text in _OPTIONS:
        p.add_argument(flag, type=kind, default=environ.get(env, default), help=f"{text} (${env}, {default})")
    for flag, env, text in _SWITCHES:
        p.add_argument(flag, action="store_true", default=_truthy(environ.get(env)), help=f"{text} (${env})")
    p.add_argument(
        "--fail",
        action="append",
        type=option_type(parse_fail_option),
        metavar="ROUTE:STATUS[:COUNT[:CODE]]",
        help="fail the next COUNT requests under ROUTE; repeatable ($FAKE_CORTEX_FAIL, ';'-separated)",
    )
    p.add_argument(
        "--reset",
        action="append",
        type=option_type(parse_reset_option),
        metavar="ROUTE[:COUNT]",
        help="close the connection of the next COUNT requests under ROUTE ($FAKE_CORTEX_RESET)",
    )
    return p


def config_from_args(
    argv: Sequence[str], environ: Mapping[str, str], prog: str | None = None
) -> tuple[str, int, FakeCortexConfig]:
    """(host, port, config) from a command line and an environment. Exits 2 on bad usage."""
    parser = build_parser(environ, prog)
    ns = parser.parse_args(list(argv))
    try:
        fail = [parse_fail_option(t) for t in environ.get("FAKE_CORTEX_FAIL", "").split(";") if t.strip()]
        reset = [parse_reset_option(t) for t in environ.get("FAKE_CORTEX_RESET", "").split(";") if t.strip()]
    except ValueError as err:
        parser.error(f"FAKE_CORTEX_FAIL / FAKE_CORTEX_RESET: {err}")
    faults = FaultSettings(
        fail=tuple(fail + (ns.fail or [])),
        reset=tuple(reset + (ns.reset or [])),
        hide_listings=ns.hide_listings,
        expire_packs=ns.expire_packs,
        storm_every=ns.storm_every,
    )
    try:
        config = FakeCortexConfig(
            api_key=environ.get("CORTEX_API_KEY") or DEFAULT_API_KEY,
            hosted=ns.hosted,
            hosted_api_key=environ.get("TINYHUMANS_API_KEY") or DEFAULT_HOSTED_KEY,
            tenant=ns.tenant,
            hosted_rate_limit=ns.hosted_rate_limit,
            index_delay=ns.index_delay,
            wait_cap=ns.wait_cap,
            pack_ttl=ns.pack_ttl,
            enrich_delay=ns.enrich_delay,
            latency=ns.latency,
            jitter=ns.jitter,
            capabilities=tuple(c.strip() for c in ns.capabilities.split(",") if c.strip()),
            flags=flags_from_env(environ),
            data_file=ns.data,
            faults=faults,
            wire=ns.wire,
        )
    except ValueError as err:
        parser.error(str(err))
    return ns.host, ns.port, config


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Run the server in the foreground until SIGTERM/SIGINT; the process exit code.

    Exit codes: 0 after a signal, 2 for bad usage or an unreadable state file, 3 when the
    address cannot be bound.
    """
    host, port, config = config_from_args(sys.argv[1:] if argv is None else argv, os.environ, prog)
    return run_in_foreground(NAME, host, port, lambda: make_server(host, port, config))
