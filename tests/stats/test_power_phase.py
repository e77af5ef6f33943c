"""Issue 30, point 5: ``memeval power`` counts each probe once, in the phase it analyses, and
says which: its probe count is the n of the KPI it plans for."""

from __future__ import annotations

import pytest

from memeval.report.files import write_text
from memeval.score.power import probe_outcomes
from tests.comparison.factory import hits, run, value
from tests.conftest import cli


def _both_phases(tmp_path):
    probes = [*hits(40, 51, "a", ("recall", "synthesis")), *hits(45, 51, "b", ("recall", "synthesis"))]
    record = run(probes)
    path = tmp_path / "run.json"
    write_text(str(path), record.dumps())
    return record, path


def test_the_probe_count_is_the_kpis_n_not_twice_it(tmp_path, capsys):
    record, path = _both_phases(tmp_path)
    n = next(k.n for k in record.kpis if k.name == "pack hit (synthesis)")
    assert n == 102 and value(record, "pack hit (synthesis)") is not None
    assert cli(["power", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("power: pack-hit (synthesis phase: each probe once) over 1 run(s)")
    assert f"{'probes':<24}{102:>8,}" in out and "204" not in out


def test_the_recall_phase_is_analysed_when_asked_and_said(tmp_path, capsys):
    record, path = _both_phases(tmp_path)
    assert cli(["power", str(path), "--phase", "recall"]) == 0
    out = capsys.readouterr().out
    assert "(recall phase: each probe once)" in out and f"{'probes':<24}{102:>8,}" in out
    assert len(probe_outcomes(record.probes, "answer", phase="recall")) == 102
    with pytest.raises(ValueError, match="unknown phase"):
        probe_outcomes(record.probes, phase="both")
    assert cli(["power", str(path), "--phase", "both"]) == 2
