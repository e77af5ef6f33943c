"""run.schema.json, generated from the record model: the record's dataclasses are its one definition.

Each record class is a ``$defs`` entry named after the class in snake case (the run itself is the
top level), with the class docstring as its description; each field is a property with its
attribute docstring (the string under it) as its description, its type mapped to JSON Schema
(``X | None`` allows null, a ``Literal`` is an ``enum``, a tuple an array, a dict an object whose
keys a ``Literal`` or enum key type names), the keywords of an ``Annotated[…, Keywords(…)]``
type, and the class's ``schema_rules`` (rules across fields). Keys follow :mod:`codec`: a field's
JSON key, flattened records spliced in, and only the fields that are always written required.

The checked-in ``memeval/spec/schemas/run.schema.json`` is this module's output, kept as a golden
(``tests/record/test_schema_gen.py``); regenerate it after changing the record with
``python -m memeval.record.schema_gen``.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import inspect
import json
import re
import sys
import textwrap
import types
import typing
from functools import cache
from pathlib import Path
from typing import Any, Literal, Union

from memeval.record.codec import Json, JsonObject, Keywords, namespace
from memeval.record.run import RunRecord

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "https://memeval.dev/schemas/run.schema.json"
TITLE = "memeval run record (run.json)"
PATH = Path(__file__).resolve().parent.parent / "spec" / "schemas" / "run.schema.json"
"""Where the generated schema is checked in (shipped in the package, printed by ``memeval schema run``)."""

_SCALARS: dict[type, str] = {bool: "boolean", int: "integer", float: "number", str: "string"}


def run_schema() -> JsonObject:
    """The JSON Schema of run.json, as :data:`PATH` holds it."""
    defs: dict[str, JsonObject] = {}
    top = _object_schema(RunRecord, defs)
    return {"$schema": SCHEMA_DIALECT, "$id": SCHEMA_ID, "title": TITLE, **top, "$defs": defs}


def render() -> str:
    """:func:`run_schema` as the file's text: two-space indented, non-ASCII kept, a final newline."""
    return json.dumps(run_schema(), indent=2, ensure_ascii=False) + "\n"


def field_docs(cls: type) -> dict[str, str]:
    """Field name → the string literal right under its annotation in ``cls`` or a record base."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__[:-1]):
        if dataclasses.is_dataclass(klass):
            docs.update(_own_docs(klass))
    return docs


@cache
def _own_docs(cls: type) -> dict[str, str]:
    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
    assert isinstance(body, ast.ClassDef)
    return {node.target.id: after.value.value for node, after in zip(body.body, body.body[1:])
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)}


def def_name(cls: type) -> str:
    """A record class's ``$defs`` name: its name in snake case (``ProbeResult`` → ``probe_result``)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()


def _object_schema(cls: type, defs: dict[str, JsonObject]) -> JsonObject:
    properties: JsonObject = {}
    required: list[Json] = []
    for key, tp, doc, always in _properties(cls):
        properties[key] = {**_type_schema(tp, defs), "description": _oneline(doc)}
        if always:
            required.append(key)
    rules: JsonObject = dict(getattr(cls, "schema_rules", {}))
    return {"description": _oneline(cls.__doc__ or ""), "type": "object", "required": required,
            "properties": properties, "additionalProperties": False, **rules}


def _properties(cls: type) -> list[tuple[str, Any, str, bool]]:
    """(JSON key, type with extras, docstring, always written) for every key of an object of
    ``cls``, a flattened record's keys in its place (never always written)."""
    hints = typing.get_type_hints(cls, namespace(cls), include_extras=True)
    docs = field_docs(cls)
    out: list[tuple[str, Any, str, bool]] = []
    for f in dataclasses.fields(cls):
        if f.metadata.get("flat"):
            out += [(key, tp, doc, False) for key, tp, doc, _ in _properties(_record_of(hints[f.name]))]
        else:
            out.append((f.metadata.get("key", f.name), hints[f.name], docs.get(f.name, ""), not f.metadata.get("omit")))
    return out


def _type_schema(tp: Any, defs: dict[str, JsonObject]) -> JsonObject:
    """The schema of values of type ``tp`` (``X | None`` included)."""
    keywords: JsonObject = {}
    if typing.get_origin(tp) is typing.Annotated:
        tp, *extras = typing.get_args(tp)
        keywords = {k: v for e in extras if isinstance(e, Keywords) for k, v in e.keywords.items()}
    if typing.get_origin(tp) in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) > 1:
            return {}  # the only wider union a record holds is Json: any JSON value
        inner = _type_schema(args[0], defs)
        if len(args) < len(typing.get_args(tp)):
            return _nullable(inner)
        return inner
    return {**_plain_schema(tp, defs), **keywords}


def _plain_schema(tp: Any, defs: dict[str, JsonObject]) -> JsonObject:
    origin = typing.get_origin(tp)
    if tp is Any:
        return {}
    if origin is Literal:
        values: list[Json] = list(typing.get_args(tp))
        if len(values) == 1:
            return {"type": _SCALARS[type(values[0])], "const": values[0]}
        return {"enum": values}
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": _type_schema(args[0], defs)}
        if len(set(args)) == 1:
            return {"type": "array", "items": _type_schema(args[0], defs), "minItems": len(args), "maxItems": len(args)}
        return {"type": "array", "prefixItems": [_type_schema(a, defs) for a in args], "items": False}
    if origin is dict:
        key, value = typing.get_args(tp)
        out: JsonObject = {"type": "object", "additionalProperties": _type_schema(value, defs)}
        names = _key_names(key)
        return {**out, "propertyNames": {"enum": names}} if names else out
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        name = def_name(tp)
        if name not in defs:
            defs[name] = {}  # reserved first: a record reached again while this one is built refers to it
            defs[name] = _object_schema(tp, defs)
        return {"$ref": f"#/$defs/{name}"}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [m.value for m in tp]}
    return {"type": _SCALARS[tp]}


def _key_names(key: Any) -> list[Json] | None:
    """The keys a dict's key type allows (a ``Literal`` or an enum), None for any string."""
    if typing.get_origin(key) is Literal:
        return list(typing.get_args(key))
    if isinstance(key, type) and issubclass(key, enum.Enum):
        return [m.value for m in key]
    return None


def _nullable(schema: JsonObject) -> JsonObject:
    """``schema`` that also allows null."""
    if "enum" in schema:
        return {**schema, "enum": [*_list(schema["enum"]), None]}
    if "type" in schema and "const" not in schema:
        return {**schema, "type": [schema["type"], "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def _list(value: Json) -> list[Json]:
    return list(value) if isinstance(value, list) else []


def _record_of(tp: Any) -> type:
    """The record class inside ``X | None``."""
    args = [a for a in typing.get_args(tp) if a is not type(None)] if typing.get_origin(tp) else [tp]
    return typing.cast(type, args[0])


def _oneline(doc: str) -> str:
    return " ".join(inspect.cleandoc(doc).split())


def main(argv: list[str] | None = None) -> int:
    """``python -m memeval.record.schema_gen [--check]``: write run.schema.json (or, with
    ``--check``, exit 1 when the checked-in file differs from the model)."""
    args = sys.argv[1:] if argv is None else argv
    text = render()
    if "--check" in args:
        same = PATH.read_text(encoding="utf-8") == text
        print(f"{PATH}: {'up to date' if same else 'differs from the record model; regenerate it'}")
        return 0 if same else 1
    PATH.write_text(text, encoding="utf-8")
    print(f"wrote {PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
