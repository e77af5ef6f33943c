"""Hostile and random input never crashes or stalls the spec loader.

Proves two things:

* Property: for random bytes, random text and random mutations of ``tests/fixtures/mini.yaml``
  (lines deleted, duplicated, swapped, re-indented, tokens replaced, the file truncated),
  :func:`load_suite` either returns a suite or raises :class:`SpecError` whose every issue is
  located inside the file (line and column >= 0, line no further than the file's last line) and
  has a message. Any other exception is a bug. ``memeval validate`` on such files exits 2 and
  prints no traceback.
* Corpus: each known attack on a YAML reader (oversized file, deep nesting, alias bomb, alias
  cycle, binary data, non-UTF-8 text, control characters, Python tags, thousands of documents,
  collection keys, giant numbers) is refused within a 2 s sanity bound, with one exact, located
  message, and nothing in the file is ever executed.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memeval.errors import SpecError
from memeval.spec.load import load_suite
from memeval.spec.yamlload import MAX_BYTES, MAX_DEPTH, YamlProblem, read_yaml
from tests.conftest import FIXTURES, MEMEVAL

MINI = (Path(FIXTURES) / "mini.yaml").read_text("utf-8")
MINI_LINES = MINI.splitlines(keepends=True)
# YAML counts these as line breaks, so marks may, too.
_BREAKS = re.compile("\r\n|[\n\r\x85\u2028\u2029]")

PROPERTY = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hostile")


def last_line(raw: bytes) -> int:
    try:
        return len(_BREAKS.split(raw.decode("utf-8")))
    except UnicodeDecodeError:
        return raw.count(b"\n") + 1


def load_checked(folder: Path, raw: bytes) -> SpecError | None:
    """Load ``raw`` as a spec; return the SpecError (checked to be well formed) or None if valid."""
    path = folder / "spec.yaml"
    path.write_bytes(raw)
    try:
        load_suite(str(path))
    except SpecError as err:
        assert err.issues, "a SpecError must carry at least one issue"
        for issue in err.issues:
            assert isinstance(issue.line, int) and isinstance(issue.column, int)
            assert issue.line >= 0 and issue.column >= 0, issue.render()
            assert isinstance(issue.message, str) and issue.message.strip(), issue.render()
            if issue.file == str(path):
                assert issue.line <= last_line(raw), issue.render()
        assert str(err)
        return err
    return None


# Replacement tokens: YAML syntax, spec vocabulary (so some mutants pass the schema and reach the
# semantic checks) and values that trip scalar construction.
TOKENS = [
    ":", ": ", "- ", "[", "]", "{", "}", ",", "&a ", "*a", "&b [*b]", "!!str ", "!!int ", "!!bool ",
    "!!python/name:os.system ", "<<: ", "---\n", "...\n", '"', "'", "? ", "|", ">", "#", "\t", "%",
    "@", "`", "", "  ", "\r", "ask", "continue", "resume", "brief", "compact", "thread", "move",
    "dropped", "focus", "abstain", "expect", "forbid", "tenant", "agent", "support", "spy", "acme",
    "id", "null", "~", "true", "yes", "0x_", "1e9999", ".inf", "9" * 400, "[0, 99]", "[3, 1]",
    "2026-09-01", "x-note", "é", "\u2028", "\x07",
]


@st.composite
def mutants(draw: st.DrawFn) -> bytes:
    lines = list(MINI_LINES)
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "token", "indent", "truncate"]))
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "token":
            pieces = re.split(r"(\w+|[^\w\s])", lines[i])
            k = draw(st.integers(0, len(pieces) - 1))
            pieces[k] = draw(st.sampled_from(TOKENS))
            lines[i] = "".join(pieces)
        elif op == "indent":
            body = lines[i].lstrip(" ")
            lines[i] = " " * max(0, len(lines[i]) - len(body) + draw(st.integers(-4, 4))) + body
        else:
            text = "".join(lines)
            lines = [text[: draw(st.integers(0, len(text)))]]
    return "".join(lines).encode("utf-8", "surrogatepass")


@PROPERTY
@given(raw=st.binary(max_size=2048))
def test_random_bytes_never_crash(scratch: Path, raw: bytes) -> None:
    load_checked(scratch, raw)


@PROPERTY
@given(text=st.text(max_size=2048))
def test_random_text_never_crashes(scratch: Path, text: str) -> None:
    load_checked(scratch, text.encode("utf-8"))


@PROPERTY
@given(raw=mutants())
def test_mutated_suites_never_crash(scratch: Path, raw: bytes) -> None:
    load_checked(scratch, raw)


def test_the_unmutated_fixture_loads(scratch: Path) -> None:
    """The mutation test starts from a valid suite, so mutants test real loader paths."""
    assert load_checked(scratch, MINI.encode()) is None


@pytest.mark.slow


def test_validate_on_random_inputs_exits_2_without_a_traceback(tmp_path: Path) -> None:
    rng = random.Random(20260901)
    inputs = {
        "bytes.yaml": bytes(rng.randrange(256) for _ in range(512)),
        "text.yaml": "".join(chr(rng.randrange(32, 0x2FF)) for _ in range(512)).encode(),
        "truncated.yaml": MINI.encode()[: len(MINI) // 3],
        "swapped.yaml": "".join(MINI_LINES[10:] + MINI_LINES[:10]).encode(),
        "reindented.yaml": "".join(" " + line if i % 7 == 3 else line for i, line in enumerate(MINI_LINES)).encode(),
        "tag.yaml": MINI.replace("route: ask", "route: !!python/name:os.system", 1).encode(),
    }
    for name, raw in inputs.items():
        (tmp_path / name).write_bytes(raw)
    proc = subprocess.run(
        [*MEMEVAL, "validate", *inputs],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.stdout == ""
    *issues, summary = proc.stderr.splitlines()
    assert summary == f"{len(issues)} error(s); nothing was run."
    assert {line.split(":", 1)[0] for line in issues} == set(inputs)


# --- the hostile corpus --------------------------------------------------------------------

BOMB = b"""a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
"""
HUGE = b"suite: huge\nabout: " + b"a" * MAX_BYTES + b"\n"
DEEP = f"nested deeper than {MAX_DEPTH} levels"
TAG = "is not allowed: specs are plain data; remove the tag"

# name -> (content, [(line, column, path, message)])
HOSTILE: dict[str, tuple[bytes, list[tuple[int, int, str, str]]]] = {
    "huge file": (HUGE, [(1, 1, "", f"file is {len(HUGE)} bytes; specs are limited to {MAX_BYTES} bytes")]),
    "10,000 levels of [": (b"[" * 10_000, [(1, MAX_DEPTH + 2, "", DEEP)]),
    "4 MiB of [": (b"[" * (MAX_BYTES - 1), [(1, MAX_DEPTH + 2, "", DEEP)]),
    "10,000 levels of {a:": (b"{a: " * 10_000, [(1, 4 * MAX_DEPTH + 5, "", DEEP)]),
    "10,000 levels of block lists": (b"- " * 10_000 + b"x\n", [(1, 2 * MAX_DEPTH + 3, "", DEEP)]),
    "billion laughs": (BOMB, None),  # checked below: the expansion point depends on the walk
    "alias cycle": (b"suite: &a [*a]\n", [(1, 8, "suite[0]", "an alias refers to a collection that contains it (a cycle); write the value out")]),
    "NUL bytes": (b"suite: x\nabout: \x00\x00\x00\x01\x02", [(1, 1, "", "binary data (a NUL byte) is not YAML")]),
    "binary blob": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", [(1, 1, "", "not UTF-8 text (byte 0x89 at offset 0); save the file as UTF-8")]),
    "latin-1 text": ("suite: café\n".encode("latin-1"), [(1, 11, "", "not UTF-8 text (byte 0xe9 at offset 10); save the file as UTF-8")]),
    "control character": (b"suite: a\x07b\n", [(1, 9, "", "character U+0007 is not allowed in YAML text; remove it")]),
    "python/name": (b"suite: !!python/name:os.system\n", [(1, 8, "suite", f"tag '!!python/name:os.system' {TAG}")]),
    "python/object/new": (b"suite: !!python/object/new:builtins.dict {}\n",
                          [(1, 8, "suite", f"tag '!!python/object/new:builtins.dict' {TAG}")]),
    "local tag": (b"suite: !secret x\n", [(1, 8, "suite", f"tag '!secret' {TAG}")]),
    "10,000 documents": (b"---\nsuite: x\n" * 10_000,
                         [(3, 1, "", "expected one YAML document, found a second one; keep one document per file (no '---' between parts)")]),
    "list as a key": (b"? [a, b]\n: c\n", [(1, 3, "", "a mapping key must be a plain name, not a list")]),
    "mapping as a key": (b"{? {a: 1} : c}\n", [(1, 4, "", "a mapping key must be a plain name, not a mapping")]),
    "5,000-digit number": (b"suite: x\nabout: " + b"9" * 5000 + b"\n",
                           [(2, 8, "about", f"'{'9' * 40}' cannot be read as a whole number; quote it if it is text")]),
    "2,000-bit hex number": (b"suite: 0x" + b"f" * 500 + b"\n",
                             [(1, 8, "suite", "number too large (more than 256 bits); quote it if it is text")]),
    "empty file": (b"", [(1, 1, "", "the file is empty")]),
    "only whitespace and comments": (b"\n  \n# nothing here\n", [(1, 1, "", "the file is empty")]),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_input_is_refused_quickly_with_one_located_message(tmp_path: Path, name: str) -> None:
    raw, expected = HOSTILE[name]
    started = time.process_time()  # this process's CPU time: what the input costs, not what the machine's load adds
    err = load_checked(tmp_path, raw)
    elapsed = time.process_time() - started
    assert elapsed < 2.0, f"{name}: {elapsed:.2f} s of CPU"
    assert err is not None
    got = [(i.line, i.column, i.path, i.message) for i in err.issues]
    if expected is None:  # the alias bomb
        assert [g[3] for g in got] == ["document too large: more than 200000 values (an alias bomb?)"]
        assert 1 <= got[0][0] <= 9 and got[0][2].startswith(tuple("abcdefghi"))
    else:
        assert got == expected


def test_python_tags_are_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    payloads = [
        f'suite: !!python/object/apply:os.system ["touch {marker}"]\n',
        f'suite: x\nabout: !!python/object/apply:subprocess.call [["touch", "{marker}"]]\n',
        f'!!python/object/apply:os.system ["touch {marker}"]: key\n',
        f'suite: x\n<<: !!python/object/apply:os.system ["touch {marker}"]\n',
    ]
    for payload in payloads:
        err = load_checked(tmp_path, payload.encode())
        assert err is not None and len(err.issues) == 1
        assert "python/object/apply" in err.issues[0].message or "merge keys" in err.issues[0].message
    assert not marker.exists()


@pytest.mark.parametrize("levels, ok", [(MAX_DEPTH, True), (MAX_DEPTH + 1, False)])
def test_depth_limit_is_exact_for_flow_and_block_nesting(levels: int, ok: bool) -> None:
    """The scanner's early refusal and the builder's agree: 64 levels pass, 65 do not."""
    flow = b"[" * levels + b"x" + b"]" * levels
    block = b"".join(b"  " * i + b"k:\n" for i in range(levels)) + b"  " * levels + b"x\n"
    for raw in (flow, block):
        if ok:  # read in full: ``levels`` nested collections around the scalar
            value, depth = read_yaml(raw)[0], 0
            while isinstance(value, list | dict):
                value, depth = (value[0] if isinstance(value, list) else value["k"]), depth + 1
            assert (depth, value) == (levels, "x")
        else:
            with pytest.raises(YamlProblem, match=f"^{DEEP}$"):
                read_yaml(raw)


def test_unquoted_dates_and_yes_stay_text() -> None:
    """No timestamp or surprising key type escapes the reader: dates are strings, keys their text."""
    data, _ = read_yaml(b"epoch: 2026-09-01T09:00:00Z\nday: 2026-09-01\nyes: 1\n~: 2\n")
    assert data == {"epoch": "2026-09-01T09:00:00Z", "day": "2026-09-01", "yes": 1, "~": 2}
