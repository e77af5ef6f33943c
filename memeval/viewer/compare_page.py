"""A comparison in the viewer: ``memeval compare``'s grid, frontier and flipped probes for the
selected runs (each run its own side, the first the baseline), every flipped probe's two packs
side by side with the lines that left and entered the pack marked, and, when the setups differ,
the refusal with every differing field and a link that allows them.

All the statistics are :func:`memeval.comparison.compare_records`'; this module only lays them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from urllib.parse import urlencode

from memeval.comparison import compare_records
from memeval.comparison.groups import side_name
from memeval.comparison.setup import SetupMismatch, differences
from memeval.comparison.view import build_html_view, build_view
from memeval.record import ProbeResult, RunRecord
from memeval.viewer.pages import render

MAX_FLIPS = 50
"""Flipped probes whose packs are laid side by side (the table above lists them all)."""


@dataclass(frozen=True)
class PackDiff:
    """One flipped probe: both packs as (line, changed) pairs: a baseline line that left the
    pack, a compared line that entered it."""

    profile: str
    kpi: str
    scenario: str
    phase: str
    probe: str
    change: str
    question: str
    before: tuple[tuple[str, bool], ...]
    after: tuple[tuple[str, bool], ...]


def as_sides(records: Sequence[RunRecord]) -> list[RunRecord]:
    """Each record its own side: a record whose side name another already has is given a
    profile of ``name@run-id`` (the name only: the setup, and so the check, is unchanged)."""
    out, seen = [], set()
    for r in records:
        name = side_name(r)
        if name in seen:
            r = replace(r, profile=f"{name}@{r.run_id[:12]}")
        seen.add(side_name(r))
        out.append(r)
    return out


def pack_diff(before: ProbeResult | None, after: ProbeResult | None) -> tuple[tuple[tuple[str, bool], ...], ...]:
    """(baseline lines, compared lines), each line marked when it is absent from the other pack."""
    a = (before.pack or "").splitlines() if before else []
    b = (after.pack or "").splitlines() if after else []
    sa, sb = set(a), set(b)
    return tuple((line, line not in sb) for line in a), tuple((line, line not in sa) for line in b)


def _diffs(sides: list[RunRecord], flips: dict[str, list[dict[str, str]]]) -> list[PackDiff]:
    by_name = {side_name(r): r for r in sides}
    base = sides[0]
    index: dict[tuple[str, str, str, str], ProbeResult] = {
        (side_name(r), p.scenario, str(p.phase), p.id): p for r in sides for p in r.probes}
    out: list[PackDiff] = []
    for profile, found in flips.items():
        if profile not in by_name:
            continue
        for f in found[:MAX_FLIPS - len(out)]:
            a = index.get((side_name(base), f["scenario"], f["phase"], f["probe"]))
            b = index.get((profile, f["scenario"], f["phase"], f["probe"]))
            before, after = pack_diff(a, b)
            asked = b or a
            out.append(PackDiff(profile, f["kpi"], f["scenario"], f["phase"], f["probe"], f["change"],
                                asked.question if asked else "", before, after))
    return out


def compare_page(runs: Sequence[tuple[str, RunRecord]], allow: Sequence[str]) -> str:
    """The comparison of ``runs`` ((key, record), baseline first), or the refusal naming the
    setup fields that differ outside ``allow``."""
    keys = [k for k, _ in runs]
    sides = as_sides([r for _, r in runs])
    names = list(zip(keys, (side_name(r) for r in sides)))
    try:
        comparison = compare_records(sides, allow_setup_diff=allow)
    except SetupMismatch:
        diffs = [(side_name(other), path, _short(x), _short(y)) for other in sides[1:]
                 for path, (x, y) in differences(sides[0], other).items() if path not in allow]
        fields = sorted({d[1] for d in diffs})
        allow_link = "?" + urlencode([("run", k) for k in keys] + [("allow", f) for f in [*allow, *fields]])
        return render("view_compare.html.j2", refused=True, names=names, base=side_name(sides[0]), diffs=diffs,
                      allow_link=allow_link, allowed=list(allow))
    view = build_view(comparison)
    view.update(build_html_view(comparison))
    flips = comparison["flips"]
    assert isinstance(flips, dict)
    return render("view_compare.html.j2", refused=False, names=names, allowed=list(allow),
                  pack_diffs=_diffs(sides, flips), max_flips=MAX_FLIPS, **view)


def _short(value: object) -> str:
    text = "none" if value is None else str(value)
    return text if len(text) <= 80 else text[:77] + "…"
