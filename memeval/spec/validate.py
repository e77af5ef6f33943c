"""JSON Schema validation that speaks the spec author's language.

Schemas ship in ``memeval/spec/schemas`` (Draft 2020-12). :func:`schema_issues` turns every
validation error into a :class:`SpecIssue` located at the offending key or value, with a
"did you mean" where a close name exists.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any, Iterator
from urllib.parse import urljoin

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource

from memeval.errors import SpecIssue
from memeval.spec.yamlload import Marks, Path, render_path
from memeval.util.suggest import did_you_mean

_TYPE_NAMES = {"string": "a string", "integer": "a whole number", "number": "a number", "boolean": "true or false",
               "array": "a list", "object": "a mapping", "null": "null"}


@cache
def schema(name: str) -> dict[str, Any]:
    """The JSON Schema called ``name`` (suite, scenario, engine, matrix, run)."""
    text = resources.files("memeval.spec").joinpath("schemas").joinpath(f"{name}.schema.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def available_schemas() -> list[str]:
    """Names of the schemas shipped in the package."""
    folder = resources.files("memeval.spec").joinpath("schemas")
    return sorted(p.name.removesuffix(".schema.json") for p in folder.iterdir() if p.name.endswith(".schema.json"))


@cache
def _documents() -> dict[str, dict[str, Any]]:
    """The shipped schemas by ``$id``."""
    return {schema(n)["$id"]: schema(n) for n in available_schemas()}


@cache
def _validator(name: str) -> Draft202012Validator:
    """The validator of schema ``name``, built once per process, over the schema with its
    references inlined (:func:`_inline`); the registry resolves what stays a reference."""
    documents = _documents()
    registry: Registry = Registry().with_resources((uri, Resource.from_contents(b)) for uri, b in documents.items())
    body = schema(name)
    return Draft202012Validator(_inline(body, body["$id"], frozenset()), registry=registry)


_NOTES = frozenset({"description", "title", "$comment"})
_RESOURCE_KEYS = ("$id", "$schema", "$defs")


def _inline(node: Any, base: str, seen: frozenset[str]) -> Any:
    """``node`` (a part of the schema whose ``$id`` is ``base``) with each subschema that is
    only a ``$ref`` (and notes) replaced by what it refers to, inlined in turn. The same
    constraints, the same errors (they name the keyword that failed, never the reference), but
    no reference resolved on every value: validating took about twice as long with them. A
    reference back into itself (a cycle) stays, made absolute so it resolves where it lands."""
    if isinstance(node, list):
        return [_inline(item, base, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and node.keys() - _NOTES == {"$ref"}:
        target = urljoin(base, ref)
        found = None if target in seen else _target(target)
        if found is None:
            return {**node, "$ref": target}
        doc, body = found
        inlined = _inline(body, doc, seen | {target})
        return {k: v for k, v in inlined.items() if k not in _RESOURCE_KEYS} if isinstance(inlined, dict) else inlined
    return {key: value if key == "$defs" else _inline(value, base, seen) for key, value in node.items()}


def _target(uri: str) -> tuple[str, Any] | None:
    """(the document's ``$id``, the subschema) a reference names, or None when it is not in a
    shipped schema or its pointer is not a plain path of keys and indices."""
    doc, _, pointer = uri.partition("#")
    node: Any = _documents().get(doc)
    for part in (p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return (doc, node) if node is not None else None


def schema_issues(data: Any, marks: Marks, name: str, file: str, base: Path = ()) -> list[SpecIssue]:
    """Every way ``data`` breaks schema ``name``, as located issues (empty when valid)."""
    issues: list[SpecIssue] = []
    errors = list(_validator(name).iter_errors(data))
    # A value of the wrong type gets one message: its range or length errors would only be noise.
    mistyped = {tuple(e.absolute_path) for e in errors if e.validator == "type"}
    for error in errors:
        if error.validator != "type" and tuple(error.absolute_path) in mistyped:
            continue
        for path, at_key, message in _explain(error):
            line, col = marks.at(base + path, key=at_key)
            issues.append(SpecIssue(file, line, col, render_path(base + path), message))
    return _dedupe(issues)


def _dedupe(issues: list[SpecIssue]) -> list[SpecIssue]:
    seen: set[tuple[Any, ...]] = set()
    out = []
    for issue in issues:
        key = (issue.line, issue.column, issue.path, issue.message)
        if key not in seen:
            seen.add(key)
            out.append(issue)
    return out


def _explain(error: ValidationError) -> Iterator[tuple[Path, bool, str]]:
    """(path, whether to point at the key, message) for one error; may yield several."""
    path: Path = tuple(error.absolute_path)
    kind, value, inst, where = _parts(error)
    if kind == "additionalProperties" and isinstance(inst, dict):
        known = where.get("properties", {})
        for key in inst:
            if key not in known and not key.startswith("x-"):
                hint = did_you_mean(key, known)
                yield path + (key,), True, f"unknown key {key!r}{hint}; allowed: {', '.join(known)} (or x-… for notes)"
        return
    if kind == "required":
        for key in value:
            if isinstance(inst, dict) and key not in inst:
                yield path, True, f"missing required key {key!r}"
        return
    yield path, False, _message(error)


def _parts(error: ValidationError) -> tuple[Any, Any, Any, dict[str, Any]]:
    """The error's keyword, its value in the schema, the instance, and the schema object it
    failed in (jsonschema types each as possibly unset; an error from ``iter_errors`` has them
    all; a boolean schema reads as an empty one)."""
    where = error.schema if isinstance(error.schema, dict) else {}
    return error.validator, error.validator_value, error.instance, where


def _message(error: ValidationError) -> str:
    kind, value, inst, where = _parts(error)
    if kind == "enum":
        return f"{inst!r} is not one of {', '.join(map(str, value))}{did_you_mean(str(inst), map(str, value))}"
    if kind == "type":
        types = [value] if isinstance(value, str) else list(value)
        wanted = " or ".join(_TYPE_NAMES.get(t, t) for t in types)
        return f"expected {wanted}, got {_describe(inst)}{_type_hint(types, inst)}"
    if kind == "pattern":
        if value.startswith("^[A-Za-z0-9]"):
            return f"{inst!r} is not a valid id: use letters, digits, '_' and '-', starting with a letter or digit"
        return f"{inst!r} does not have the expected form ({value})"
    if kind in ("minItems", "maxItems") and list(error.absolute_path)[-1:] == ["dropped"]:
        return f"takes a [first, last] pair of turn indices, e.g. [0, 3]; got {len(inst)} item(s)"
    if kind == "minItems":
        return "must not be empty" if value == 1 else f"needs at least {value} items"
    if kind == "maxItems":
        return f"takes at most {value} items"
    if kind == "minLength":
        return "must not be empty"
    if kind == "maxLength":
        return f"is longer than {value} characters"
    if kind in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        sign = {"minimum": "≥", "maximum": "≤", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}[kind]
        return f"must be {sign} {value}, got {inst!r}"
    if kind == "uniqueItems":
        return "has duplicate entries"
    if kind == "oneOf" and where.get("oneOf", [{}])[0].get("type") == "string":
        return f"expected a string or a list of strings, got {_describe(inst)}"
    if kind == "propertyNames":
        return f"{inst!r} looks like a secret: read secrets from the environment, never from YAML"
    return error.message


def _type_hint(types: list[str], value: Any) -> str:
    """How to write ``value`` as the wanted type, when there is an obvious way."""
    scalar = value is None or isinstance(value, (str, int, float, bool))
    if types == ["boolean"] and isinstance(value, str) and value.lower() in ("true", "false", "yes", "no", "on", "off"):
        return "; write true or false without quotes"
    if types == ["string"] and scalar and value is not None and not isinstance(value, str):
        return "; put it in quotes to make it text"
    if types == ["array"] and scalar and value is not None and (not isinstance(value, str) or len(value) < 40):
        return f"; write it as a list: [{_flow(value)}]"
    return ""


def _flow(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return repr(value) if isinstance(value, str) else str(value)


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}" if len(value) < 40 else "a string"
    if isinstance(value, list):
        return "a list"
    return "a mapping"
