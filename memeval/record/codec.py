"""The one JSON edge of the run record: frozen dataclasses to plain JSON values and back.

A record class's fields are its JSON keys, in declaration order. Two field markers change that:

- :func:`omitted` — the key is left out when the value is None (a stage that never ran leaves
  no key, as run.json always had it), and a missing key reads back as None;
- :func:`flat` — a nested record whose keys sit in the parent object (None: none of them are
  there), for keys a later stage adds together (e.g. ``llm_cached`` and ``llm_error``).

A field may also name its JSON key (``metadata={"key": …}``) when the key is a Python keyword
(``from``).
Decoding is strict: an unknown key, a missing key, or a value of the wrong type is a
:class:`RecordError` naming the JSON path.
"""

from __future__ import annotations

import dataclasses
import enum
import sys
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Annotated, Any, Literal, TypeVar, Union, cast

from memeval.errors import UsageError

Json = Union[str, int, float, bool, None, Sequence["Json"], Mapping[str, "Json"]]
"""A JSON value as :mod:`json` reads it: the type of data a record carries but does not model
(the resolved spec, an engine's own settings)."""

JsonObject = dict[str, Json]
T = TypeVar("T")


class Keywords:
    """JSON Schema keywords every value of an annotated field keeps (``minimum``, ``maximum``,
    ``pattern``): read by :mod:`memeval.record.schema_gen`, ignored when decoding."""

    def __init__(self, **keywords: Json) -> None:
        self.keywords: JsonObject = dict(keywords)

    def __repr__(self) -> str:
        return f"Keywords({', '.join(f'{k}={v!r}' for k, v in self.keywords.items())})"


NonNegative = Annotated[int, Keywords(minimum=0)]
"""A count: 0 or more."""
Positive = Annotated[int, Keywords(minimum=1)]
"""1 or more (a 1-based rank or index)."""
Fraction = Annotated[float, Keywords(minimum=0, maximum=1)]
"""A share or score in [0, 1]."""
Sha256 = Annotated[str, Keywords(pattern="^[0-9a-f]{64}$")]
"""A sha256 as 64 lower-case hex digits."""


class RecordError(UsageError):
    """A file or value is not a run record memeval can read (exit 2); the message is one line."""


def omitted(**kw: Any) -> Any:
    """A field whose key is absent from JSON while its value is None."""
    return dataclasses.field(metadata={"omit": True, **kw.pop("metadata", {})}, **kw)


def flat(**kw: Any) -> Any:
    """A nested record (or None) whose keys are spliced into the parent object."""
    return dataclasses.field(metadata={"flat": True}, **kw)


def to_json(value: Any) -> Json:
    """``value`` (a record, tuple, dict, enum or scalar) as plain JSON data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Json] = {}
        _encode_into(value, out)
        return out
    if isinstance(value, enum.Enum):
        return value.value  # type: ignore[no-any-return]
    if isinstance(value, (tuple, list)):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k.value if isinstance(k, enum.Enum) else k): to_json(v) for k, v in value.items()}
    return value  # type: ignore[no-any-return]


def _encode_into(record: Any, out: dict[str, Json]) -> None:
    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        if f.metadata.get("flat"):
            if value is not None:
                _encode_into(value, out)
        elif not (f.metadata.get("omit") and value is None):
            out[f.metadata.get("key", f.name)] = to_json(value)


def from_json(cls: type[T], data: Json, where: str = "$") -> T:
    """A ``cls`` record from JSON data, checked on the way.

    Raises:
        RecordError: a missing or unknown key, or a value of the wrong type (names the path).
    """
    if not isinstance(data, dict):
        raise RecordError(f"{where}: expected an object, found {_kind(data)}")
    rest = dict(data)
    record = _decode_record(cls, rest, where)
    if rest:
        raise RecordError(f"{where}: unknown key {next(iter(rest))!r}")
    return record


def json_keys(cls: type) -> list[str]:
    """Every JSON key an object of record class ``cls`` may hold, in order (flattened keys
    included)."""
    out: list[str] = []
    for f, tp in _fields(cls):
        out += json_keys(_record_of(tp)) if f.metadata.get("flat") else [f.metadata.get("key", f.name)]
    return out


def _decode_record(cls: type[T], rest: dict[str, Json], where: str) -> T:
    values: dict[str, Any] = {}
    for f, tp in _fields(cast(Any, cls)):
        if f.metadata.get("flat"):
            inner = _record_of(tp)
            present = [k for k in json_keys(inner) if k in rest]
            values[f.name] = _decode_record(inner, rest, where) if present else None
            continue
        key = f.metadata.get("key", f.name)
        if key not in rest:
            if f.metadata.get("omit"):
                values[f.name] = None
                continue
            raise RecordError(f"{where}: missing key {key!r}")
        values[f.name] = decode(tp, rest.pop(key), f"{where}.{key}")
    return cls(**values)


def decode(tp: Any, data: Json, where: str) -> Any:
    """``data`` read as type ``tp`` (records, unions with None, tuples, dicts, Literals, enums,
    scalars, :data:`Json`)."""
    if tp is Any:
        return data
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        if data is None and type(None) in args:
            return None
        others = [a for a in args if a is not type(None)]
        if len(others) == 1:
            return decode(others[0], data, where)
        return data  # the only wider union a record holds is Json: data it carries, not models
    if origin is Literal:
        if data not in typing.get_args(tp):
            raise RecordError(f"{where}: {data!r} is not one of {', '.join(map(repr, typing.get_args(tp)))}")
        return data
    if origin is tuple:
        return _decode_tuple(tp, data, where)
    if origin is dict:
        if not isinstance(data, dict):
            raise RecordError(f"{where}: expected an object, found {_kind(data)}")
        kt, vt = typing.get_args(tp)
        return {decode(kt, k, f"{where}.{k}"): decode(vt, v, f"{where}.{k}") for k, v in data.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return from_json(tp, data, where)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(data)
        except ValueError:
            raise RecordError(f"{where}: {data!r} is not a known {tp.__name__}") from None
    return _scalar(tp, data, where)


def _decode_tuple(tp: Any, data: Json, where: str) -> tuple[Any, ...]:
    if not isinstance(data, list):
        raise RecordError(f"{where}: expected an array, found {_kind(data)}")
    args = typing.get_args(tp)
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(decode(args[0], v, f"{where}[{i}]") for i, v in enumerate(data))
    if len(args) != len(data):
        raise RecordError(f"{where}: expected {len(args)} items, found {len(data)}")
    return tuple(decode(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, data)))


def _scalar(tp: type, data: Json, where: str) -> Any:
    # bool is an int in Python, and an int a float: check what JSON would have written.
    checks: dict[type, Callable[[Json], bool]] = {
        bool: lambda v: isinstance(v, bool), int: lambda v: isinstance(v, int) and not isinstance(v, bool),
        float: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), str: lambda v: isinstance(v, str)}
    if not checks[tp](data):
        raise RecordError(f"{where}: expected {tp.__name__}, found {_kind(data)}")
    return data


def _kind(data: Json) -> str:
    if data is None:
        return "null"
    return "an object" if isinstance(data, dict) else "an array" if isinstance(data, list) else type(data).__name__


@cache
def _fields(cls: Any) -> tuple[tuple[dataclasses.Field[Any], Any], ...]:
    hints = typing.get_type_hints(cls, namespace(cls))
    return tuple((f, hints[f.name]) for f in dataclasses.fields(cls))


def namespace(cls: type) -> dict[str, Any]:
    """The names ``cls``'s annotations are resolved in: its module's, over this one's (so
    :data:`Json`'s own forward reference resolves wherever a record uses :data:`JsonObject`)."""
    return {**globals(), **vars(sys.modules[cls.__module__])}


def _record_of(tp: Any) -> type:
    """The record class inside ``X | None``."""
    return cast(type, next(a for a in typing.get_args(tp) if a is not type(None)) if typing.get_origin(tp) else tp)
