"""`memeval generate needle`: seeded haystacks of any size in LongMemEval's format, the needle
at the chosen depth, read back by the same streaming reader as the published files."""

import json

import pytest

from memeval.datasets.generate import TEMPLATES, HaystackSpec, load_template, write_file
from memeval.benchmarks.source import iter_units, scan
from memeval.errors import UsageError
from tests.conftest import cli


def _needles(path):
    dataset = scan("longmemeval", path, variant="synthetic")
    out = []
    for instance in iter_units(dataset):
        turns = [t for s in instance.sessions for t in s.turns]
        out.append((instance, turns, [i for i, t in enumerate(turns) if t.has_answer]))
    return out


@pytest.mark.parametrize("events, depth, where", [(1000, 0.0, 0), (1000, 0.5, 500), (1000, 1.0, 998), (10_001, 0.25, 2500)])
def test_the_needle_sits_at_the_depth_asked(tmp_path, events, depth, where):
    path = tmp_path / "n.json"
    write_file(HaystackSpec(TEMPLATES["locker-code"], events=events, depth=depth, seed=1), path)
    [(instance, turns, needles)] = _needles(path)
    assert len(turns) == events and needles == [where] and turns[where].role == "user"
    assert instance.answer in turns[where].content and instance.question == "What is my gym locker code?"
    needle_session = next(s for s in instance.sessions if any(t.has_answer for t in s.turns))
    assert instance.answer_session_ids == (needle_session.id,)
    assert sum(1 for t in turns if instance.answer in t.content) == 1


def test_the_same_seed_writes_the_same_file_and_another_seed_another(tmp_path):
    spec = HaystackSpec(TEMPLATES["parking-spot"], events=300, depth=0.3, seed=9, questions=3)
    write_file(spec, tmp_path / "a.json")
    write_file(spec, tmp_path / "b.json")
    write_file(HaystackSpec(TEMPLATES["parking-spot"], events=300, depth=0.3, seed=10, questions=3), tmp_path / "c.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes() != (tmp_path / "c.json").read_bytes()
    assert len({i.answer for i, _, _ in _needles(tmp_path / "a.json")}) == 3


def test_the_cli_writes_a_file_that_imports_and_validates(tmp_path, capsys):
    path = tmp_path / "needle.json"
    assert cli(["generate", "needle", "-o", str(path), "--events", "1000", "--depth", "0.9", "--seed", "3",
                "--questions", "2"]) == 0
    assert "needle at depth 0.9 (turn 898)" in capsys.readouterr().out
    assert cli(["import", "longmemeval", str(path), "-o", str(tmp_path / "suite"), "--variant", "synthetic"]) == 0
    assert cli(["validate", str(tmp_path / "suite" / "suite.yaml")]) == 0


def test_a_template_file_and_bad_settings(tmp_path):
    template = tmp_path / "wifi.json"
    template.write_text(json.dumps({"fact": "The cabin wifi password is {value}.", "question": "What is the cabin wifi password?"}))
    loaded = load_template(str(template))
    assert loaded.name == "wifi" and loaded.answer == "{value}"
    template.write_text(json.dumps({"fact": "no placeholder", "question": "q"}))
    with pytest.raises(UsageError, match="field 'fact'"):
        load_template(str(template))
    with pytest.raises(UsageError, match="outside 0..1"):
        write_file(HaystackSpec(loaded, events=10, depth=1.5, seed=0), tmp_path / "x.json")
    with pytest.raises(UsageError, match="not a shipped template"):
        load_template("no-such-template")
