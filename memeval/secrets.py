"""What counts as a secret, and the one masking function every output edge applies.

A secret is the value of a variable or setting whose *name* says so (it ends in ``key``,
``apikey``, ``token``, ``secret``, ``password``, ``passwd``, ``pass`` or
``credentials``, after ``_`` or alone), and any URL carrying user info
(``postgres://user:password@host``). The matrix refuses such names with a value, flags a server
reports under them are recorded as ``***``, and :func:`mask` removes every known secret value
from text wherever it appears: stderr lines, run.json and the reports, the journal, the copy of an
engine server's log.

The known values are gathered from the environment when first needed (every variable that is a
secret by the rules above) plus what :func:`remember` adds (keys read from settings).
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

SECRET_NAME = re.compile(r"(?i)(^|_)(key|apikey|token|secret|password|passwd|pass|credentials?)$")
USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@:]*:[^/\s@]*@")
BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{6,}")
MASK = "***"
_BEARER_WORD = re.compile(r"(?i)bearer")
_ESCAPED = re.compile(r'["\\\x00-\x1f]')  # what json.dumps escapes with ensure_ascii off
SHORTEST = 6
"""Shorter values are not masked by value (masking "on" or "1" everywhere would garble text)."""

_lock = threading.Lock()
_known: set[str] = set()
_from_env = False


def is_secret_name(name: str) -> bool:
    """Whether ``name`` names a secret."""
    return bool(SECRET_NAME.search(name))


def has_credentials(value: str) -> bool:
    """Whether ``value`` holds a URL with user info (``scheme://user:password@host``)."""
    return bool(USERINFO.search(value))


def is_secret(name: str, value: Any) -> bool:
    """Whether the variable ``name=value`` holds a secret (by its name or by its value)."""
    return is_secret_name(name) or has_credentials(str(value))


def remember(values: Iterable[str]) -> None:
    """Add secret values (keys read from settings) to those :func:`mask` removes."""
    with _lock:
        _known.update(v for v in values if len(v) >= SHORTEST)


def secrets_of(environ: Mapping[str, str]) -> set[str]:
    """The secret values of an environment: every variable that is a secret by name or value."""
    return {v for k, v in environ.items() if len(v) >= SHORTEST and is_secret(k, v)}


def mask(text: str) -> str:
    """``text`` with every known secret value, URL user info and bearer token replaced by ``***``."""
    return _masked(text, _known_values())


def mask_json(value: Any) -> Any:
    """A JSON value with :func:`mask` applied to every string in it, keys included; ``value``
    itself when that would change nothing (judged once on its JSON text, which a run record of
    ~20k strings serialises in a few milliseconds where masking each string takes tens)."""
    known = _known_values()
    if _nothing_to_mask(json.dumps(value, ensure_ascii=False), known):
        return value
    return _mask_json(value, known)


def _nothing_to_mask(text: str, known: list[str]) -> bool:
    """Whether no string of the JSON value written as ``text`` holds a known value, user info
    or a bearer token. Conservative: a known value that JSON would escape, any ``://`` and any
    "bearer" send the value to the string-by-string pass."""
    if "://" in text or _BEARER_WORD.search(text):
        return False
    return not any(_ESCAPED.search(value) or value in text for value in known)


def _known_values() -> list[str]:
    """The known secret values, longest first (so a secret holding another is masked whole)."""
    global _from_env
    with _lock:
        if not _from_env:
            _known.update(secrets_of(os.environ))
            _from_env = True
        return sorted(_known, key=len, reverse=True)


def _masked(text: str, known: list[str]) -> str:
    for value in known:
        if value in text:
            text = text.replace(value, MASK)
    if "://" in text:  # user info needs a scheme; most strings of a record have none
        text = USERINFO.sub(lambda m: m.group(1) + MASK + "@", text)
    return BEARER.sub(lambda m: m.group(1) + MASK, text)


def _mask_json(value: Any, known: list[str]) -> Any:
    # The known values are gathered once per JSON value: a run record holds ~20k strings.
    if isinstance(value, str):
        return _masked(value, known)
    if isinstance(value, dict):
        return {_masked(str(k), known): _mask_json(v, known) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_json(v, known) for v in value]
    return value
