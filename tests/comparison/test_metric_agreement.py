"""The run tables and the KPIs say the same thing under the same name: "pack invents nothing" is
one definition in both, and a latency percentile is the same number (or the same "–") in the
latency table and the KPI table."""

from __future__ import annotations

from memeval.record import TimingLabel
from tests.comparison.factory import probe, run


def _abstain(pid: str, invented: bool, groups: tuple[str, ...]) -> object:
    return probe(pid, None, groups=groups, expect=(), abstain=True, invented=invented)


def test_pack_invents_nothing_is_one_number_in_the_totals_and_the_kpis() -> None:
    """An abstain probe outside the abstention group (e.g. a forgotten fact, scored as residue)
    counted in the totals' column but not in the KPI: 71% (15/21) beside 50% (n=12)."""
    probes = [_abstain("a1", False, ("abstention",)), _abstain("a2", True, ("abstention",)),
              _abstain("f1", False, ("forgetting",)), _abstain("f2", False, ("forgetting",)), probe("p")]
    record = run(probes)  # type: ignore[arg-type]
    column = record.totals["synthesis"].all.abstained
    kpi = next(k for k in record.kpis if k.name == "pack invents nothing")
    assert (column.k, column.n) == (1, 2) and kpi.n == 2
    assert column.value is not None and kpi.value == 100 * column.value


def test_a_latency_percentile_reads_the_same_in_the_latency_table_and_the_kpis() -> None:
    samples = [float(i) for i in range(1, 7)]  # 6 samples: too few for a p95
    record = run([probe("p")], timings={TimingLabel.PROBE_ASK.value: samples})
    row = record.latency[TimingLabel.PROBE_ASK]
    kpis = {k.name: k.value for k in record.kpis if k.group == "latency"}
    assert (row.p50, row.p95, row.p99, row.max) == (kpis["probe p50"], None, None, 6.0)
    assert kpis["probe p95"] is None and kpis["probe p99"] is None
    enough = run([probe("p")], timings={TimingLabel.PROBE_ASK.value: [float(i) for i in range(1, 21)]})
    assert enough.latency[TimingLabel.PROBE_ASK].p95 == next(k.value for k in enough.kpis if k.name == "probe p95")
