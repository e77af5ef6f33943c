"""The typed run record: exact JSON round trips (generated records and real runs), strict reading,
the format version, every field documented, and a real run valid under run.schema.json (which is
generated from the model: tests/record/test_schema_gen.py)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memeval import record as R
from memeval.errors import exit_code, outcome_of
from memeval.record import RecordError, RunRecord
from memeval.record.schema_gen import field_docs
from memeval.spec.validate import schema
from tests.conftest import FIXTURES, cli

RECORD_CLASSES = [c for c in (getattr(R, n) for n in R.__all__) if isinstance(c, type) and dataclasses.is_dataclass(c)]

text = st.text(max_size=12)
number = st.floats(allow_nan=False, allow_infinity=False, width=32)
json_leaf = st.none() | st.booleans() | st.integers(-10**6, 10**6) | number | text
json_value = st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
                          max_leaves=8)
st.register_type_strategy(float, number)
st.register_type_strategy(str, text)
for cls in (R.SuiteInfo, R.EngineSnapshot, R.EngineSetup):  # their free JSON parts (the resolved spec, engine settings)
    kwargs = {f.name: st.dictionaries(text, json_value, max_size=3)
              for f in dataclasses.fields(cls) if f.name in ("resolved", "settings")}
    st.register_type_strategy(cls, st.builds(cls, **kwargs))


# A whole record is near hypothesis's size budget: oversized draws are skipped, not failures.
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.data_too_large])
@given(st.from_type(RunRecord))
def test_any_record_round_trips_exactly(record: RunRecord) -> None:
    text_ = record.dumps()
    again = RunRecord.from_json(json.loads(text_))
    assert again == record
    assert again.dumps() == text_


def _mini_run(tmp_path: Path) -> Path:
    out = tmp_path / "run"
    assert cli(["run", f"{FIXTURES}/mini.yaml", "--out", str(out), "--quiet"]) == 0
    return out / "run.json"


def test_a_real_run_json_reads_back_to_the_same_bytes(tmp_path: Path) -> None:
    path = _mini_run(tmp_path)
    raw = path.read_text(encoding="utf-8")
    record = RunRecord.from_json(json.loads(raw), str(path))
    assert record.dumps() == raw
    assert record.probes and all(isinstance(p, R.ProbeResult) for p in record.probes)
    assert all(isinstance(label, R.TimingLabel) for label in record.timings)


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(format_version=0), "format_version 0; this memeval reads run.json formats 1 to 2"),
    (lambda d: d.update(format_version=3), "format_version 3 (written by a newer memeval); this memeval reads run.json formats 1 to 2"),
    (lambda d: d.update(format_version="2"), "format_version '2'; this memeval reads"),
    (lambda d: d.update(format_version=True), "format_version True; this memeval reads"),
    (lambda d: d.pop("format_version"), "not a memeval run.json (no format_version)"),
    (lambda d: d.update(surprise=1), "$: unknown key 'surprise'"),
    (lambda d: d["probes"][0].update(status="lost"), "$.probes[0].status: 'lost' is not one of"),
    (lambda d: d["probes"][0].pop("hit"), "$.probes[0]: missing key 'hit'"),
    (lambda d: d["scenarios"][0].update(writes="3"), "$.scenarios[0].writes: expected int, found str"),
    (lambda d: d["timings"].update({"coffee break": [1.0]}), "'coffee break' is not a known TimingLabel"),
    # the path names the exact value, however deep (the decoders are built once per type)
    (lambda d: d["probes"][-1].update(hit=1), f"$.probes[{{last}}].hit: expected bool, found int"),
    (lambda d: d["scenarios"][0].update(writes=True), "$.scenarios[0].writes: expected int, found bool"),
    (lambda d: d["timings"].update({"warm-up": [1.0, 2.0, "3"]}), "$.timings.warm-up[2]: expected float, found str"),
    (lambda d: d.update(probes={}), "$.probes: expected an array, found an object"),
])
def test_a_bad_or_older_file_is_refused_in_one_line(tmp_path: Path, change: Any, message: str) -> None:
    data = json.loads(_mini_run(tmp_path).read_text())
    message = message.replace("{last}", str(len(data["probes"]) - 1))
    change(data)
    with pytest.raises(RecordError) as err:
        RunRecord.from_json(data, "old.json")
    assert message in str(err.value) and str(err.value).startswith("old.json: ") and "\n" not in str(err.value)
    assert exit_code(outcome_of(err.value)) == 2


def test_every_field_has_a_one_line_docstring() -> None:
    for cls in RECORD_CLASSES:
        docs = field_docs(cls)
        for f in dataclasses.fields(cls):
            assert docs.get(f.name, "").strip(), f"{cls.__name__}.{f.name} has no docstring"
            assert "\n" not in docs[f.name].strip(), f"{cls.__name__}.{f.name}: one line"


def test_a_run_record_validates_against_the_schema(tmp_path: Path) -> None:
    import jsonschema

    data = json.loads(_mini_run(tmp_path).read_text())
    jsonschema.Draft202012Validator(schema("run")).validate(data)
    data["probes"][0]["extra"] = 1
    assert not jsonschema.Draft202012Validator(schema("run")).is_valid(data)
