"""Reading the record model as the tests check it: each class's fields, their JSON keys and types,
and the attribute docstring under each field (found with ``ast`` in the class's source)."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import sys
import textwrap
import typing
from typing import Any


def field_docs(cls: type) -> dict[str, str]:
    """Field name → the string literal right under its annotation in ``cls`` (and its bases)."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__[:-1]):
        if not dataclasses.is_dataclass(klass):
            continue
        body = ast.parse(textwrap.dedent(inspect.getsource(klass))).body[0]
        assert isinstance(body, ast.ClassDef)
        for node, after in zip(body.body, body.body[1:]):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(after, ast.Expr) \
                    and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str):
                docs[node.target.id] = after.value.value
    return docs


def hints(cls: type) -> dict[str, Any]:
    """The resolved type of each field of ``cls``."""
    return typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))


def unwrap(tp: Any) -> Any:
    """``X`` from ``X | None``."""
    if typing.get_origin(tp) in (typing.Union, __import__("types").UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args[0] if len(args) == 1 else tp
    return tp


def records_inside(tp: Any) -> list[tuple[str, type]]:
    """The record classes reachable from a field's type, with how the schema reaches them:
    ``object`` (the value itself), ``items`` (an array's items) or ``values`` (an object's values)."""
    tp = unwrap(tp)
    origin = typing.get_origin(tp)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return [("object", tp)]
    if origin is tuple:
        args = typing.get_args(tp)
        inner = unwrap(args[0])
        return [("items", inner)] if isinstance(inner, type) and dataclasses.is_dataclass(inner) else []
    if origin is dict:
        inner = unwrap(typing.get_args(tp)[1])
        return [("values", inner)] if isinstance(inner, type) and dataclasses.is_dataclass(inner) else []
    return []
