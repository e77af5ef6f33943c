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
    return cast(T, decode(cls, data, where))


def json_keys(cls: type) -> list[str]:
    """Every JSON key an object of record class ``cls`` may hold, in order (flattened keys
    included)."""
    out: list[str] = []
    for f, tp in _fields(cls):
        out += json_keys(_record_of(tp)) if f.metadata.get("flat") else [f.metadata.get("key", f.name)]
    return out


def decode(tp: Any, data: Json, where: str) -> Any:
    """``data`` read as type ``tp`` (records, unions with None, tuples, dicts, Literals, enums,
    scalars, :data:`Json`).

    Raises:
        RecordError: a value that is not of the type, at its JSON path under ``where``.
    """
    try:
        return _decoder(tp)(data)
    except _Bad as bad:
        raise RecordError(f"{where}{''.join(reversed(bad.path))}: {bad.message}") from None


class _Bad(Exception):
    """A value that does not decode: the message, and its path inside the value being decoded,
    innermost step first (each container adds its own step on the way out)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[str] = []


def _at(step: str, bad: _Bad) -> _Bad:
    bad.path.append(step)
    return bad


Decoder = Callable[[Json], Any]


@cache
def _decoder(tp: Any) -> Decoder:
    """The function that decodes JSON data as ``tp``, built once per type: a record run decodes
    hundreds of thousands of values, and looking each type up again dominated reading one."""
    if tp is Any:
        return _as_is
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        others = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(others) != 1:
            return _as_is  # the only wider union a record holds is Json: data it carries, not models
        return _optional(_decoder(others[0])) if len(others) < len(typing.get_args(tp)) else _decoder(others[0])
    if origin is Literal:
        return _literal(typing.get_args(tp))
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return _sequence(_decoder(args[0]))
        return _fixed(tuple(_decoder(a) for a in args))
    if origin is dict:
        kt, vt = typing.get_args(tp)
        return _mapping(_decoder(kt), _decoder(vt))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _record(tp)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum(tp)
    return _SCALARS[tp]


def _as_is(data: Json) -> Json:
    return data


def _optional(inner: Decoder) -> Decoder:
    return lambda data: None if data is None else inner(data)


def _literal(allowed: tuple[Any, ...]) -> Decoder:
    def decode_literal(data: Json) -> Json:
        if data not in allowed:
            raise _Bad(f"{data!r} is not one of {', '.join(map(repr, allowed))}")
        return data
    return decode_literal


def _array(data: Json) -> list[Json]:
    if not isinstance(data, list):
        raise _Bad(f"expected an array, found {_kind(data)}")
    return data


def _sequence(item: Decoder) -> Decoder:
    def decode_sequence(data: Json) -> tuple[Any, ...]:
        values = _array(data)
        try:
            return tuple(map(item, values))
        except _Bad as bad:
            index = next(i for i, v in enumerate(values) if not _decodes(item, v))
            raise _at(f"[{index}]", bad) from None
    return decode_sequence


def _fixed(items: tuple[Decoder, ...]) -> Decoder:
    def decode_fixed(data: Json) -> tuple[Any, ...]:
        values = _array(data)
        if len(items) != len(values):
            raise _Bad(f"expected {len(items)} items, found {len(values)}")
        out = []
        for i, (item, value) in enumerate(zip(items, values)):
            try:
                out.append(item(value))
            except _Bad as bad:
                raise _at(f"[{i}]", bad) from None
        return tuple(out)
    return decode_fixed


def _mapping(key: Decoder, value: Decoder) -> Decoder:
    def decode_mapping(data: Json) -> dict[Any, Any]:
        if not isinstance(data, dict):
            raise _Bad(f"expected an object, found {_kind(data)}")
        out = {}
        for k, v in data.items():
            try:
                out[key(k)] = value(v)
            except _Bad as bad:
                raise _at(f".{k}", bad) from None
        return out
    return decode_mapping


def _decodes(item: Decoder, value: Json) -> bool:
    try:
        item(value)
    except _Bad:
        return False
    return True


def _record(cls: type) -> Decoder:
    fill = _filler(cls)

    def decode_record(data: Json) -> Any:
        if not isinstance(data, dict):
            raise _Bad(f"expected an object, found {_kind(data)}")
        rest = dict(data)
        record = fill(rest)
        if rest:
            raise _Bad(f"unknown key {next(iter(rest))!r}")
        return record
    return decode_record


Filler = Callable[[dict[str, Json]], Any]


@cache
def _filler(cls: type) -> Filler:
    """The function that builds a ``cls`` from the keys it takes out of a JSON object (what is
    left is not its)."""
    plan: list[tuple[str, str, bool, Filler | None, frozenset[str], Decoder]] = []
    for f, tp in _fields(cls):
        if f.metadata.get("flat"):
            inner = _record_of(tp)
            plan.append((f.name, f.name, False, _filler(inner), frozenset(json_keys(inner)), _as_is))
        else:
            plan.append((f.name, f.metadata.get("key", f.name), bool(f.metadata.get("omit")), None, frozenset(),
                         _decoder(tp)))

    def fill(rest: dict[str, Json]) -> Any:
        values: dict[str, Any] = {}
        for name, key, omit, inner_fill, inner_keys, decode_value in plan:
            if inner_fill is not None:
                values[name] = inner_fill(rest) if not inner_keys.isdisjoint(rest) else None
            elif key in rest:
                try:
                    values[name] = decode_value(rest.pop(key))
                except _Bad as bad:
                    raise _at(f".{key}", bad) from None
            elif omit:
                values[name] = None
            else:
                raise _Bad(f"missing key {key!r}")
        return cls(**values)
    return fill


def _enum(tp: type[enum.Enum]) -> Decoder:
    def decode_enum(data: Json) -> enum.Enum:
        try:
            return tp(data)
        except ValueError:
            raise _Bad(f"{data!r} is not a known {tp.__name__}") from None
    return decode_enum


def _scalar(tp: type, check: Callable[[Json], bool]) -> Decoder:
    def decode_scalar(data: Json) -> Json:
        if not check(data):
            raise _Bad(f"expected {tp.__name__}, found {_kind(data)}")
        return data
    return decode_scalar


# bool is an int in Python, and an int a float: check what JSON would have written.
_SCALARS: dict[type, Decoder] = {
    bool: _scalar(bool, lambda v: v is True or v is False),
    int: _scalar(int, lambda v: isinstance(v, int) and v is not True and v is not False),
    float: _scalar(float, lambda v: isinstance(v, (int, float)) and v is not True and v is not False),
    str: _scalar(str, lambda v: isinstance(v, str)),
}


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
