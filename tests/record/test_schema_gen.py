"""run.schema.json is generated from the record model (memeval.record.schema_gen) and kept as a
golden: the checked-in file must be the generator's output. After changing the record, regenerate
it with ``python -m memeval.record.schema_gen`` (or ``pytest tests/record/test_schema_gen.py
--update-goldens``) and review the diff."""

from __future__ import annotations

import enum
import glob
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, ClassVar, Literal

import jsonschema
import pytest

from memeval.record import RunRecord
from memeval.record import schema_gen as gen
from memeval.record.codec import Fraction, JsonObject, Keywords, flat, omitted
from memeval.spec.validate import schema
from tests.conftest import FIXTURES, cli


def test_the_checked_in_run_schema_is_the_generated_one(request: pytest.FixtureRequest) -> None:
    text = gen.render()
    if request.config.getoption("--update-goldens"):
        gen.PATH.write_text(text, encoding="utf-8")
    assert gen.PATH.read_text(encoding="utf-8") == text, \
        "run.schema.json differs from the record model: run python -m memeval.record.schema_gen and review it"
    assert gen.main(["--check"]) == 0


def test_the_check_fails_on_a_schema_that_differs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    edited = json.loads(gen.render())
    edited["$defs"]["probe_result"]["properties"]["route"]["description"] = "Hand-edited."
    copy = tmp_path / "run.schema.json"
    copy.write_text(json.dumps(edited, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    monkeypatch.setattr(gen, "PATH", copy)
    assert gen.main(["--check"]) == 1
    assert "differs from the record model" in capsys.readouterr().out
    assert gen.main([]) == 0 and gen.main(["--check"]) == 0  # regenerated
    assert copy.read_text(encoding="utf-8") == gen.render()


def test_memeval_schema_run_prints_the_generated_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["schema", "run"]) == 0
    assert json.loads(capsys.readouterr().out) == gen.run_schema() == schema("run")


def test_every_upgraded_and_current_record_is_valid_under_it() -> None:
    validator = jsonschema.Draft202012Validator(gen.run_schema())
    validator.check_schema(gen.run_schema())
    for path in sorted(glob.glob(os.path.join(FIXTURES, "records", "**", "*.json"), recursive=True)):
        if path.endswith("summary.json"):
            continue
        with open(path, encoding="utf-8") as fh:
            record = RunRecord.from_json(json.load(fh), path)
        errors = [e.message for e in validator.iter_errors(record.to_json())]
        assert errors == [], path


class Mood(enum.Enum):
    CALM = "calm"
    CROSS = "cross"


@dataclass(frozen=True)
class Inner:
    """An inner record,
    over two lines."""

    k: int
    """A count."""


@dataclass(frozen=True)
class Spliced:
    """Keys that sit in the parent."""

    x: bool | None
    """An x."""


@dataclass(frozen=True)
class Toy:
    """A toy record."""

    level: Literal["low", "high"] | None
    """Low or high."""
    share: Fraction
    """A share."""
    pair: tuple[float, float] | None
    """Two numbers."""
    by_mood: dict[Mood, Inner]
    """Inner records by mood."""
    by_level: dict[Literal["low", "high"], int]
    """Counts by level."""
    inner: Inner | None
    """An inner record."""
    both: tuple[str, int]
    """A string and a number."""
    source: str = field(metadata={"key": "from"})
    """Where from."""
    late: Annotated[int, Keywords(minimum=2)] | None = omitted(default=None)
    """Left out when None."""
    spliced: Spliced | None = flat(default=None)
    """Its keys sit here."""
    schema_rules: ClassVar[JsonObject] = {"not": {"required": ["late", "x"]}}
    """A rule across fields."""


def test_the_generator_maps_each_kind_of_field() -> None:
    defs: dict[str, JsonObject] = {}
    toy = gen._object_schema(Toy, defs)
    props = toy["properties"]
    assert isinstance(props, dict)
    assert toy["description"] == "A toy record." and toy["additionalProperties"] is False
    assert toy["required"] == ["level", "share", "pair", "by_mood", "by_level", "inner", "both", "from"]
    assert props["level"] == {"enum": ["low", "high", None], "description": "Low or high."}
    assert props["share"] == {"type": "number", "minimum": 0, "maximum": 1, "description": "A share."}
    assert props["pair"] == {"type": ["array", "null"], "items": {"type": "number"}, "minItems": 2, "maxItems": 2,
                             "description": "Two numbers."}
    assert props["by_mood"] == {"type": "object", "additionalProperties": {"$ref": "#/$defs/inner"},
                                "propertyNames": {"enum": ["calm", "cross"]}, "description": "Inner records by mood."}
    assert props["by_level"]["propertyNames"] == {"enum": ["low", "high"]}
    assert props["inner"] == {"anyOf": [{"$ref": "#/$defs/inner"}, {"type": "null"}], "description": "An inner record."}
    assert props["both"]["prefixItems"] == [{"type": "string"}, {"type": "integer"}]
    assert props["from"]["description"] == "Where from." and "source" not in props
    assert props["late"] == {"type": ["integer", "null"], "minimum": 2, "description": "Left out when None."}
    assert props["x"] == {"type": ["boolean", "null"], "description": "An x."} and "spliced" not in props
    assert toy["not"] == {"required": ["late", "x"]}
    assert defs == {"inner": {"description": "An inner record, over two lines.", "type": "object", "required": ["k"],
                              "properties": {"k": {"type": "integer", "description": "A count."}},
                              "additionalProperties": False}}


def test_a_current_run_record_is_described_field_by_field() -> None:
    run = gen.run_schema()
    assert run["properties"]["format_version"] == {  # type: ignore[index]
        "type": "integer", "const": 2, "description": "The run.json format (:data:`FORMAT_VERSION`)."}
    probe = run["$defs"]["probe_result"]  # type: ignore[index]
    assert probe["properties"]["route"]["enum"] == ["ask", "continue", "resume", "brief", "compact"]  # type: ignore[index]
    assert "llm_cached" in probe["properties"] and "llm_cached" not in probe["required"]  # type: ignore[index,operator]
