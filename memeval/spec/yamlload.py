"""Safe YAML reading that keeps where every value came from.

:func:`read_yaml` composes the document with PyYAML's safe loader and builds plain Python data
itself, so that it can (a) record the line and column of every mapping key and value, (b) reject
duplicate keys, tags, oversized files, deep nesting and alias bombs with a located message, and
(c) never construct anything but str, int, float, bool, None, list and dict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from memeval.errors import SpecIssue

MAX_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 200_000

_SCALAR_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
}
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


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


class _Builder:
    def __init__(self, loader: yaml.SafeLoader):
        self.loader = loader
        self.marks = Marks()
        self.count = 0

    def build(self, node: yaml.Node, path: Path, depth: int) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise YamlProblem(*_mark(node), f"document too large: more than {MAX_NODES} values (an alias bomb?)", path)
        if depth > MAX_DEPTH:
            raise YamlProblem(*_mark(node), f"nested deeper than {MAX_DEPTH} levels", path)
        self.marks.values.setdefault(path, _mark(node))
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path, depth)
        if isinstance(node, yaml.SequenceNode):
            if node.tag != _SEQ_TAG:
                raise YamlProblem(*_mark(node), f"tag {node.tag!r} is not allowed: specs are plain data", path)
            return [self.build(child, path + (i,), depth + 1) for i, child in enumerate(node.value)]
        if node.tag not in _SCALAR_TAGS:
            raise YamlProblem(*_mark(node), f"tag {node.tag!r} is not allowed: specs are plain data", path)
        return self.loader.construct_object(node, deep=True)

    def _mapping(self, node: yaml.MappingNode, path: Path, depth: int) -> dict[str, Any]:
        if node.tag != _MAP_TAG:
            raise YamlProblem(*_mark(node), f"tag {node.tag!r} is not allowed: specs are plain data", path)
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise YamlProblem(*_mark(key_node), "merge keys ('<<') are not supported; write the keys out", path)
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag not in _SCALAR_TAGS:
                raise YamlProblem(*_mark(key_node), "a mapping key must be a plain scalar", path)
            key = str(self.loader.construct_object(key_node))
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
        line = raw[: err.start].count(b"\n") + 1
        raise YamlProblem(line, 1, f"not UTF-8 text (byte 0x{raw[err.start]:02x} at offset {err.start})") from None
    if "\x00" in text:
        raise YamlProblem(1, 1, "binary data (a NUL byte) is not YAML")
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            raise YamlProblem(1, 1, "the file is empty")
        builder = _Builder(loader)
        return builder.build(root, (), 0), builder.marks
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise YamlProblem(line, col, f"YAML syntax: {err.problem or err.context}") from None
    except RecursionError:
        raise YamlProblem(1, 1, "nested too deeply to read") from None
    finally:
        loader.dispose()


def problem_issue(file: str, problem: YamlProblem) -> SpecIssue:
    """The SpecIssue for a reading problem."""
    return SpecIssue(file, problem.line, problem.column, render_path(problem.path), problem.message)


def render_path(path: Path) -> str:
    """``scenarios[2].probes[0].expect`` for a JSON path."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
