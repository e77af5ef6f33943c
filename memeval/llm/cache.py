"""The on-disk cache of model replies: one JSON file per key, in a sharded folder.

The key (:func:`cache_key`) is the sha256 of a canonical JSON object holding the endpoint
(without credentials), the model, the prompt template's sha256, the sha256 of every template
variable (for answers: the pack and the question), the sampling settings and a salt. The salt
keeps a sweep's repeats from sharing answers (pass the repeat id); it is empty by default.

The cache lives in :func:`cache_folder`: ``$MEMEVAL_CACHE_DIR``, else
``$XDG_CACHE_HOME/memeval/answers``, else ``~/.cache/memeval/answers``, looked up when a run
starts (never at import), so a changed environment is always honoured.

An entry holds the reply text, its tokens and its cost as first paid, so a cached answer still
reports what it cost. Files are written atomically; an unreadable file counts as a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from typing import Any

from memeval.report.files import write_json
from memeval.util.userdirs import cache_root


def cache_folder(env: Mapping[str, str]) -> str:
    """Where replies are cached for the environment ``env`` (see the module docstring)."""
    if env.get("MEMEVAL_CACHE_DIR"):
        return env["MEMEVAL_CACHE_DIR"]
    return os.path.join(cache_root(env), "answers")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_key(endpoint: str, model: str, prompt_sha256: str, variables: Mapping[str, str],
              sampling: Mapping[str, Any], salt: str = "") -> str:
    """The cache key of one model call (64 hex digits); see the module docstring."""
    fields = {"endpoint": endpoint, "model": model, "prompt_sha256": prompt_sha256,
              "variables": {name: sha256_text(value) for name, value in variables.items()},
              "sampling": dict(sampling), "salt": salt}
    return sha256_text(json.dumps(fields, sort_keys=True, separators=(",", ":")))


class ReplyCache:
    """Replies on disk under ``folder/<key[:2]>/<key>.json``."""

    def __init__(self, folder: str):
        self.folder = folder

    def _path(self, key: str) -> str:
        return os.path.join(self.folder, key[:2], f"{key}.json")

    def get(self, key: str) -> dict[str, Any] | None:
        """The entry stored under ``key``, or None (also for a corrupt or foreign file)."""
        try:
            with open(self._path(key), encoding="utf-8") as fh:
                entry = json.load(fh)
        except (OSError, ValueError):
            return None
        return entry if isinstance(entry, dict) and isinstance(entry.get("text"), str) else None

    def put(self, key: str, entry: Mapping[str, Any]) -> None:
        """Store ``entry`` (JSON-serialisable) atomically."""
        write_json(self._path(key), dict(entry))
