"""A suite naming a benchmark or grader nothing installs is a spec error at the field that names
it, with the close name: the schema no longer lists them (a plugin adds its own), so the
installed benchmarks decide."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import cli
from tests.datasets.files import locomo_records, write


def _suite(tmp_path: Path, dataset: str) -> Path:
    write(tmp_path / "locomo10.json", locomo_records())
    suite = tmp_path / "bench.yaml"
    suite.write_text(f"suite: s\nabout: lookup\ndataset:\n  path: locomo10.json\n{dataset}")
    return suite


@pytest.mark.parametrize("dataset, where, words", [
    ("  format: locomoo\n", ":5:11", "field 'format': unknown benchmark 'locomoo' (did you mean 'locomo'?); installed: "),
    ("  format: locomo\n  grader: locomo-f2\n", ":6:11",
     "unknown grader 'locomo-f2' (did you mean 'locomo-f1'?); use one of memeval, locomo-f1, mem0-j"),
    ("  format: locomo\n  grader: locomo-evidence-recall\n", ":6:11", "unknown grader 'locomo-evidence-recall'"),
])
def test_an_unknown_benchmark_or_grader_is_a_spec_error_at_its_field(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                     dataset: str, where: str, words: str) -> None:
    suite = _suite(tmp_path, dataset)
    assert cli(["validate", str(suite)]) == 2
    err = capsys.readouterr().err
    assert f"{suite}{where}" in err and words in err, err


def test_a_known_benchmark_and_grader_validate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["validate", str(_suite(tmp_path, "  format: locomo\n  grader: mem0-j\n"))]) == 0


def test_importing_an_unknown_benchmark_is_refused_before_the_file_is_read(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["import", "longmemevl", str(tmp_path / "absent.json"), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "unknown benchmark 'longmemevl' (did you mean 'longmemeval'?); installed: " in err and "absent" not in err
    assert not (tmp_path / "out").exists()
