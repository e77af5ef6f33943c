"""Field access at the JSON edge of a dataset file, with one-line errors naming file and field."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memeval.errors import UsageError


@dataclass(frozen=True)
class Where:
    """A place in a dataset file: the file and the element (``instance 3 (question_id 'x')``)."""

    path: Path
    element: str

    def error(self, field: str, message: str) -> UsageError:
        """``FILE: ELEMENT: field 'F': MESSAGE`` as a usage error (exit 2)."""
        return UsageError(f"{self.path}: {self.element}: field '{field}': {message}")

    def obj(self, value: Any, field: str) -> dict[str, Any]:
        """``value`` as a JSON object, or an error for ``field``."""
        if not isinstance(value, dict):
            raise self.error(field, f"expected an object, got {_kind(value)}")
        return value

    def required(self, record: dict[str, Any], field: str) -> Any:
        """``record[field]``, or an error saying it is missing."""
        if field not in record:
            raise self.error(field, "missing")
        return record[field]

    def text(self, record: dict[str, Any], field: str, allow_empty: bool = False) -> str:
        """A required string field."""
        value = self.required(record, field)
        if not isinstance(value, str) or (not allow_empty and not value.strip()):
            raise self.error(field, f"expected a non-empty string, got {_kind(value)}")
        return value

    def text_list(self, record: dict[str, Any], field: str) -> tuple[str, ...]:
        """A required list of strings."""
        value = self.required(record, field)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(field, f"expected a list of strings, got {_kind(value)}")
        return tuple(value)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "an empty string" if not value.strip() else "a string"
    names = {int: "an integer", float: "a number", list: "a list", dict: "an object"}
    return names.get(type(value), type(value).__name__)
