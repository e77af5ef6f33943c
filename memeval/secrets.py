"""What counts as a secret's name, in one place: settings, flags and environment variables whose
name ends in ``key``, ``token``, ``secret`` or ``password`` are masked or refused wherever they
would reach a file (run.json flags, matrix profiles). The engine schema's ``propertyNames`` rule
says the same for engine settings."""

from __future__ import annotations

import re

SECRET_NAME = re.compile(r"(?i)(^|_)(key|token|secret|password)$")


def is_secret_name(name: str) -> bool:
    """Whether ``name`` names a secret."""
    return bool(SECRET_NAME.search(name))
