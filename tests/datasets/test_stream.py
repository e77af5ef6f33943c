"""The bounded-memory array reader: the same elements as json.load at any chunk size, the file's
sha256, and a one-line error naming the file for every broken file."""

import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memeval.datasets.stream import ArrayStream
from memeval.errors import UsageError

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12)


@settings(max_examples=60, deadline=None)
@given(items=st.lists(json_values, max_size=8), chunk=st.integers(min_value=1, max_value=64), indent=st.sampled_from([None, 1]))
def test_any_array_reads_back_at_any_chunk_size(tmp_path_factory, items, chunk, indent):
    path = tmp_path_factory.mktemp("s") / "a.json"
    path.write_text(json.dumps(items, indent=indent, ensure_ascii=False), encoding="utf-8")
    stream = ArrayStream(path, chunk_bytes=chunk)
    assert list(stream) == items
    assert stream.sha256 == hashlib.sha256(path.read_bytes()).hexdigest() and stream.count == len(items)


def test_an_element_larger_than_many_chunks_reads_whole(tmp_path):
    items = [{"text": "x" * 300_000, "n": i} for i in range(3)]
    path = tmp_path / "big.json"
    path.write_text(json.dumps(items))
    assert list(ArrayStream(path, chunk_bytes=1024)) == items


@pytest.mark.parametrize("text, words", [
    ("", "not a JSON array"),
    ('{"question_id": "a"}', "not a JSON array"),
    ('[{"a": 1}, {"b": 2', "truncated"),
    ('[{"a": 1},', "truncated"),
    ('[{"a": tru}, {"b": 2}, {"c": 3}]', "malformed JSON"),
    ('[{"a": 1} {"b": 2}]', "malformed JSON"),
    ('[{"a": 1}] [', "unexpected data after"),
])
def test_broken_files_are_refused_with_the_file_named(tmp_path, text, words):
    path = tmp_path / "broken.json"
    path.write_text(text)
    with pytest.raises(UsageError) as err:
        list(ArrayStream(path, chunk_bytes=4))
    assert words in str(err.value) and str(path) in str(err.value) and "\n" not in str(err.value)


def test_a_syntax_error_early_in_a_large_file_is_reported_without_reading_the_rest(tmp_path):
    path = tmp_path / "early.json"
    with path.open("w") as out:
        out.write('[{"a": nul}, ')
        out.write(", ".join(json.dumps({"pad": "y" * 1000}) for _ in range(5000)) + "]")
    stream = iter(ArrayStream(path, chunk_bytes=4096))
    with pytest.raises(UsageError, match="malformed JSON") as err:
        next(stream)
    assert "after 4096 bytes" in str(err.value)


def test_a_missing_file_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="cannot read"):
        list(ArrayStream(tmp_path / "nope.json"))
