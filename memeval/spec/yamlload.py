"""Safe YAML reading that keeps where every value came from.

:func:`read_yaml` composes the document with PyYAML's safe loader and builds plain Python data
itself, so that it can (a) record the line and column of every mapping key and value, (b) reject
duplicate keys, tags, oversized files, deep nesting, alias bombs, non-finite numbers (``.nan``,
``.inf``) and text that is not Unicode (lone surrogates) with a located message, and (c) never
construct anything but str, int, float (finite), bool, None, list and dict. Dates stay text
(``2026-09-01`` is the string it looks like): a spec has no timestamp type.

Hostile input is bounded while it is *scanned*, not only once it is built: the scanner refuses
nesting deeper than :data:`MAX_DEPTH` (PyYAML's scanner is quadratic in flow depth and its
composer recursive) and the composer stops after :data:`MAX_NODES` nodes.

Where PyYAML has its C extension (libyaml), the events come from the C parser (about 14 times
faster) and are composed here, with the same depth and node bounds checked event by event and
the same marks. Any problem found on that path is reported by reading the file again with the
pure-Python loader, so a broken spec gets the same message whichever parser is present.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any

import yaml

from memeval.errors import SpecIssue

MAX_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 200_000
MAX_INT_BITS = 256

_SCALAR_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
}
_KIND = {"tag:yaml.org,2002:int": "a whole number", "tag:yaml.org,2002:float": "a number",
         "tag:yaml.org,2002:bool": "true or false", "tag:yaml.org,2002:null": "null"}
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"

Path = tuple[str | int, ...]


@dataclass
class Marks:
    """1-based (line, column) of each value by its JSON path; ``keys`` holds mapping keys' marks."""

    values: dict[Path, tuple[int, int]] = field(default_factory=dict)
    keys: dict[Path, tuple[int, int]] = field(default_factory=dict)

    def at(self, path: Path, key: bool = False) -> tuple[int, int]:
        """The closest known mark for ``path`` (walking up to the root), or (1, 1)."""
        table = self.keys if key else self.values
        probe = tuple(path)
        while probe:
            if probe in table:
                return table[probe]
            if probe in self.values:
                return self.values[probe]
            probe = probe[:-1]
        return self.values.get((), (1, 1))


class YamlProblem(Exception):
    """A located problem found while reading; converted to a SpecIssue by the caller."""

    def __init__(self, line: int, column: int, message: str, path: Path = ()):
        super().__init__(message)
        self.line, self.column, self.message, self.path = line, column, message, path


def _mark(node: yaml.Node | yaml.Mark) -> tuple[int, int]:
    mark = node.start_mark if isinstance(node, yaml.Node) else node
    return mark.line + 1, mark.column + 1


def _tag_name(tag: str) -> str:
    return "!!" + tag.removeprefix("tag:yaml.org,2002:") if tag.startswith("tag:yaml.org,2002:") else tag


def _tag_problem(node: yaml.Node, path: Path) -> YamlProblem:
    return YamlProblem(*_mark(node), f"tag {_tag_name(node.tag)!r} is not allowed: specs are plain data; remove the tag", path)


_RESOLVERS = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses deep nesting while scanning and too many nodes while composing."""

    # Dates and times resolve as plain strings: the schemas check their form.
    yaml_implicit_resolvers = _RESOLVERS

    def __init__(self, text: str):
        self.composed = 0
        super().__init__(text)

    def _check_depth(self, levels: int) -> None:
        # Each open flow collection and each block indentation level opens one collection, so
        # the collection at level k sits at depth >= k - 1: the builder would refuse it too.
        if levels - 1 > MAX_DEPTH:
            raise YamlProblem(*_mark(self.get_mark()), f"nested deeper than {MAX_DEPTH} levels")

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:  # noqa: N803 (PyYAML's name)
        self._check_depth(self.flow_level + 1 + len(self.indents))
        super().fetch_flow_collection_start(TokenClass)

    def add_indent(self, column: int) -> bool:
        added = super().add_indent(column)
        if added:
            self._check_depth(self.flow_level + len(self.indents))
        return added

    def compose_node(self, parent: Any, index: Any) -> Any:
        self.composed += 1
        if self.composed > MAX_NODES:
            raise YamlProblem(*self._next_mark(), f"document too large: more than {MAX_NODES} values")
        return super().compose_node(parent, index)

    def _next_mark(self) -> tuple[int, int]:
        """The 1-based line and column of the next event."""
        peek: Callable[[], yaml.Event] = self.peek_event  # PyYAML's stubs leave it unannotated
        mark = peek().start_mark or self.get_mark()
        return mark.line + 1, mark.column + 1



class _Reread(Exception):
    """The C-parser path found a problem the pure-Python loader words (and locates) itself:
    a syntax error, nesting too deep, too many values. The builder's own problems (tags, keys,
    aliases, values) carry the node's mark, the same on both paths, and are raised as found."""


if yaml.__with_libyaml__:
    from yaml._yaml import CParser

    class _FastLoader(yaml.composer.Composer, CParser, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
        """Events from libyaml, composed in Python: the composer counts nodes and nesting as the
        events arrive (the C parser keeps its own stack, so deep input cannot recurse in C)."""

        yaml_implicit_resolvers = _RESOLVERS

        def __init__(self, text: str):
            self.composed, self.depth = 0, 0
            CParser.__init__(self, text)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)

        def compose_node(self, parent: Any, index: Any) -> Any:
            self.composed += 1
            if self.composed > MAX_NODES:
                raise _Reread()
            opens = self.check_event(yaml.MappingStartEvent, yaml.SequenceStartEvent)
            self.depth += opens
            if self.depth > MAX_DEPTH + 1:
                raise _Reread()
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= opens
else:  # pragma: no cover - PyYAML without libyaml
    _FastLoader = None  # type: ignore[assignment,misc]


def _check_text(text: str, node: yaml.Node, path: Path) -> None:
    """Refuse text that is not Unicode (a lone surrogate from an escape such as ``"\\ud800"``):
    it would load, then fail the first time a report or the engine encodes it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        bad = f"U+{ord(text[err.start]):04X}"
        raise YamlProblem(*_mark(node), f"text holds {bad}, half of a surrogate pair and not a character; "
                          "remove the escape or write the character itself", path) from None


class _Builder:
    def __init__(self, loader: yaml.SafeLoader):
        self.loader = loader
        self.marks = Marks()
        self.count = 0
        self.open: set[int] = set()  # ids of the collections being built, to catch alias cycles

    def build(self, node: yaml.Node, path: Path, depth: int) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise YamlProblem(*_mark(node), f"document too large: more than {MAX_NODES} values (an alias bomb?)", path)
        if depth > MAX_DEPTH:
            raise YamlProblem(*_mark(node), f"nested deeper than {MAX_DEPTH} levels")  # its path is unreadable
        self.marks.values.setdefault(path, _mark(node))
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, path)
        if id(node) in self.open:
            raise YamlProblem(*_mark(node), "an alias refers to a collection that contains it (a cycle); write the value out", path)
        self.open.add(id(node))
        try:
            if isinstance(node, yaml.MappingNode):
                return self._mapping(node, path, depth)
            if node.tag != _SEQ_TAG:
                raise _tag_problem(node, path)
            return [self.build(child, path + (i,), depth + 1) for i, child in enumerate(node.value)]
        finally:
            self.open.discard(id(node))

    def _scalar(self, node: yaml.ScalarNode, path: Path) -> Any:
        if node.tag not in _SCALAR_TAGS:
            raise _tag_problem(node, path)
        try:
            value = self.loader.construct_object(node, deep=True)
        except (ValueError, KeyError, OverflowError):  # `0x_`, `!!bool maybe`, an int of 5,000 digits
            kind = _KIND.get(node.tag, "its tag")
            raise YamlProblem(*_mark(node), f"{node.value[:40]!r} cannot be read as {kind}; quote it if it is text", path) from None
        if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
            raise YamlProblem(*_mark(node), f"number too large (more than {MAX_INT_BITS} bits); quote it if it is text", path)
        if isinstance(value, float) and not math.isfinite(value):
            raise YamlProblem(*_mark(node), f"{node.value!r} is not a finite number; write a number such as 60, "
                              "or quote it if it is text", path)
        if isinstance(value, str):
            _check_text(value, node, path)
        return value

    def _mapping(self, node: yaml.MappingNode, path: Path, depth: int) -> dict[str, Any]:
        if node.tag != _MAP_TAG:
            raise _tag_problem(node, path)
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise YamlProblem(*_mark(key_node), "merge keys ('<<') are not supported; write the keys out", path)
            if key_node.tag not in _SCALAR_TAGS | {_MAP_TAG, _SEQ_TAG}:
                raise _tag_problem(key_node, path)  # before its shape: the tag is the worse news
            if not isinstance(key_node, yaml.ScalarNode):
                kind = "a list" if isinstance(key_node, yaml.SequenceNode) else "a mapping"
                raise YamlProblem(*_mark(key_node), f"a mapping key must be a plain name, not {kind}", path)
            if key_node.tag not in _SCALAR_TAGS:
                raise _tag_problem(key_node, path)
            # A key is its text: `yes:` is the key 'yes', `1:` the key '1', never True or 1.
            key = key_node.value
            _check_text(key, key_node, path)
            if key in out:
                first = self.marks.keys[path + (key,)]
                raise YamlProblem(*_mark(key_node), f"duplicate key {key!r} (first at line {first[0]})", path + (key,))
            self.marks.keys[path + (key,)] = _mark(key_node)
            out[key] = self.build(value_node, path + (key,), depth + 1)
        return out


def read_yaml(raw: bytes) -> tuple[Any, Marks]:
    """Parse one YAML document into plain data plus the marks of every value.

    Raises:
        YamlProblem: the bytes are too large, not UTF-8, not YAML, use a tag, a merge key or a
            duplicate key, nest too deep, or expand into too many values.
    """
    if len(raw) > MAX_BYTES:
        raise YamlProblem(1, 1, f"file is {len(raw)} bytes; specs are limited to {MAX_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line_start = raw.rfind(b"\n", 0, err.start) + 1
        line = raw[: err.start].count(b"\n") + 1
        column = len(raw[line_start : err.start].decode("utf-8")) + 1  # valid up to the bad byte
        message = f"not UTF-8 text (byte 0x{raw[err.start]:02x} at offset {err.start}); save the file as UTF-8"
        raise YamlProblem(line, column, message) from None
    if "\x00" in text:
        raise YamlProblem(1, 1, "binary data (a NUL byte) is not YAML")
    if _FastLoader is not None:
        try:
            return _compose(text, _FastLoader)
        except _Reread:
            pass  # the pure-Python reading below says what is wrong, where, in its own words
    return _compose(text, _Loader)


def _compose(text: str, kind: Any) -> tuple[Any, Marks]:
    """The plain data and marks of the single document in ``text``, read by a ``kind`` loader.

    Raises:
        YamlProblem: whatever is wrong with it (see :func:`read_yaml`).
    """
    loader = None
    try:
        loader = kind(text)
        root = loader.get_single_node()
        if root is None:
            raise YamlProblem(1, 1, "the file is empty")
        builder = _Builder(loader)
        return builder.build(root, (), 0), builder.marks
    except (yaml.YAMLError, RecursionError) as err:
        if kind is not _Loader:
            raise _Reread() from None
        raise _located(text, err) from None
    finally:
        if loader is not None:
            loader.dispose()


def _located(text: str, err: yaml.YAMLError | RecursionError) -> YamlProblem:
    """The located problem for what the pure-Python loader raised."""
    if isinstance(err, yaml.reader.ReaderError):
        return _reader_problem(text, err)
    if isinstance(err, yaml.MarkedYAMLError):
        return _syntax_problem(err)
    return YamlProblem(1, 1, "nested too deeply to read")


def _reader_problem(text: str, err: yaml.reader.ReaderError) -> YamlProblem:
    before = text[: err.position]
    line, col = before.count("\n") + 1, err.position - (before.rfind("\n") + 1) + 1
    return YamlProblem(line, col, f"character U+{err.character:04X} is not allowed in YAML text; remove it")


def _syntax_problem(err: yaml.MarkedYAMLError) -> YamlProblem:
    mark = err.problem_mark or err.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    if isinstance(err, yaml.composer.ComposerError) and err.context == "expected a single document in the stream":
        return YamlProblem(line, col, "expected one YAML document, found a second one; keep one document per file (no '---' between parts)")
    message = f"YAML syntax: {err.problem or err.context}"
    if err.problem and err.context and err.context_mark and _mark(err.context_mark) != (line, col):
        message += f" ({err.context} at line {err.context_mark.line + 1}, column {err.context_mark.column + 1})"
    if err.problem and "'\\t'" in err.problem:
        message += "; indent with spaces, not tabs"
    elif err.problem == "mapping values are not allowed here":
        message += "; quote a value that contains ': ', or check the indentation"
    elif err.problem and err.problem.startswith(("expected ',' or ']'", "expected ',' or '}'")):
        message += f"; close it with '{err.problem[17]}', or quote a value that contains ', ', '[' or '{{'"
    return YamlProblem(line, col, message)


def problem_issue(file: str, problem: YamlProblem) -> SpecIssue:
    """The SpecIssue for a reading problem."""
    return SpecIssue(file, problem.line, problem.column, render_path(problem.path), problem.message)


def render_path(path: Path) -> str:
    """``scenarios[2].probes[0].expect`` for a JSON path."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
