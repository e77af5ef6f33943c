"""The user's folders memeval keeps files in (answer cache, parsed model files)."""

from __future__ import annotations

import os
from collections.abc import Mapping


def cache_root(env: Mapping[str, str]) -> str:
    """``$XDG_CACHE_HOME/memeval``, else ``~/.cache/memeval`` (``HOME`` read from ``env``)."""
    base = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return os.path.join(base, "memeval")
