"""The report lines of a run's disputed gold (:mod:`memeval.score.errata`): what was set apart,
how the run did on it, and the ceiling it imposes on the headline rates."""

from __future__ import annotations

from collections.abc import Sequence

from memeval.record import ErrataRecord, ErrataResult, ProbeResult


def errata_lines(errata: ErrataRecord | None) -> list[str]:
    """The lines the run report prints under its header (none without an errata file)."""
    if errata is None:
        return []
    probes = len({(d.scenario, d.probe) for d in errata.disputed})
    lines = [f"Disputed gold: {probes} probe(s) named by the errata file `{errata.file}` ({errata.covers}; "
             f"{errata.count} entries, sha256 `{errata.sha256[:12]}`) are left out of every headline rate, total and "
             "KPI; each n below counts the rest."]
    lines += [_result(r) for r in errata.results]
    if errata.unselected:
        lines.append(f"{errata.unselected} entries name dataset questions this run does not select.")
    if errata.unknown:
        lines.append(f"Warning: {len(errata.unknown)} errata id(s) name no question of the suite or its dataset and "
                     f"were not applied: {', '.join(errata.unknown[:10])}.")
    return lines


def _pct(k: int, n: int) -> str:
    return "–" if n == 0 else f"{100 * k / n:.1f}%"


def _result(r: ErrataResult) -> str:
    clean = r.n - r.disputed
    ceiling = "–" if r.ceiling is None else f"{100 * r.ceiling:.1f}%"
    return (f"{r.kpi}: headline {_pct(r.clean_k, clean)} (n = {clean}, {r.disputed} disputed left out); "
            f"disputed gold {r.disputed_k} of {r.disputed} ({_pct(r.disputed_k, r.disputed)}); "
            f"ceiling {ceiling} ({clean} of {r.n}: the best attainable if every disputed gold is unattainable)")


def benchmark_ceiling(questions: Sequence[ProbeResult]) -> str | None:
    """The ceiling beside a benchmark's accuracy, over its scored ``questions`` (one probe
    each): None when none is disputed."""
    scored = [p for p in questions if p.scored]
    disputed = sum(1 for p in scored if p.disputed)
    if not disputed:
        return None
    clean = len(scored) - disputed
    return (f"Disputed gold: {disputed} of {len(scored)} scored questions are left out of this table (errata); "
            f"ceiling {_pct(clean, len(scored))} = ({len(scored)} − {disputed}) / {len(scored)}, the best accuracy "
            "attainable if every disputed gold is unattainable.")
