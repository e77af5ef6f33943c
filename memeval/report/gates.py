"""CI gates: conditions on KPIs that make ``memeval run`` exit 1 when a run does not meet them.

A gate names a KPI by the slug of its name (``pack hit (synthesis)`` → ``pack_hit_synthesis``; the unit may be added:
``pre_turn p95`` → ``pre_turn_p95`` or ``pre_turn_p95_ms``) and holds a condition
(``>= 0.9``, ``== 0``, ``<= 50``). Values are in the KPI's unit, except rates (percent KPIs),
which are written as a fraction (``0.9``) or a percent (``90%``). A gate on a KPI the run did
not measure FAILS and says "no data", one the engine cannot have (it lacks the capability)
FAILS and says "unsupported by the engine": neither ever passes.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from memeval.errors import UsageError
from memeval.record import Kpi
from memeval.score.kpi import compute_kpis
from memeval.util.suggest import did_you_mean

OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, "<=": operator.le, "==": operator.eq, "!=": operator.ne, ">": operator.gt, "<": operator.lt}
_CONDITION = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(-?[0-9]+(?:\.[0-9]+)?)(%?)\s*$")
_UNIT_SUFFIX = {"ms": "_ms", "usd": "_usd", "pct": "_pct", "tokens": "_tokens"}


@dataclass(frozen=True)
class Gate:
    """One condition on one KPI. ``threshold`` is in the KPI's unit (percent for rates);
    ``written`` is the condition as the user wrote it, ``source`` where (the suite file or
    ``--fail-under``)."""

    kpi: str
    op: str
    threshold: float
    written: str
    source: str


def slug(name: str) -> str:
    """A KPI name as a gate key: lower case, ``$`` as ``usd``, runs of other characters as one
    ``_`` (``engine models $`` → ``engine_models_usd``)."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower().replace("$", "usd")).strip("_")


def known_kpis() -> tuple[Kpi, ...]:
    """Every KPI a run reports (values empty): the list gates are checked against."""
    return compute_kpis((), (), {}, None, None)


def _keys(kpis: Iterable[Kpi]) -> dict[str, Kpi]:
    out: dict[str, Kpi] = {}
    for k in kpis:
        out[slug(k.name)] = k
        out[slug(k.name) + _UNIT_SUFFIX.get(k.unit, "")] = k
    return out


def parse(key: str, condition: str, source: str, kpis: Sequence[Kpi] | None = None) -> Gate:
    """A gate from its key and condition, checked against the KPI list (did-you-mean).

    Raises:
        UsageError: an unknown KPI, a condition that does not parse, or a rate written as a
            number above 1 without ``%``.
    """
    keys = _keys(kpis if kpis is not None else known_kpis())
    if key not in keys:
        raise UsageError(f"{source}: gates.{key}: no KPI of that name{did_you_mean(key, keys)}")
    m = _CONDITION.match(condition)
    if not m:
        raise UsageError(f"{source}: gates.{key}: {condition!r} is not a condition like '>= 0.9', '== 0' or '<= 50'")
    op, number, percent = m.group(1), float(m.group(2)), m.group(3)
    if keys[key].unit == "pct":
        if not percent and abs(number) > 1:
            raise UsageError(f"{source}: gates.{key}: a rate is a fraction (0.9) or a percent (90%), not {number:g}")
        number = number if percent else 100 * number
    elif percent:
        raise UsageError(f"{source}: gates.{key}: {keys[key].name} is not a rate; drop the %")
    return Gate(key, op, number, condition.strip(), source)


def parse_fail_under(text: str, kpis: Sequence[Kpi] | None = None) -> Gate:
    """``--fail-under KPI=VALUE``: fail when the KPI is worse than VALUE in its better
    direction (below it for ↑ KPIs, above it for ↓ ones; below for KPIs without one)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise UsageError(f"--fail-under {text!r}: write KPI=VALUE, e.g. pack_hit_synthesis=0.9")
    known = kpis if kpis is not None else known_kpis()
    kpi = _keys(known).get(key.strip())
    op = "<=" if kpi is not None and kpi.better == "down" else ">="
    return parse(key.strip(), f"{op} {value.strip()}", "--fail-under", known)


def suite_gates(gates: Mapping[str, str], source: str) -> list[Gate]:
    """The gates a suite file declares, parsed and checked."""
    kpis = known_kpis()
    return [parse(key, condition, source, kpis) for key, condition in gates.items()]


@dataclass(frozen=True)
class Verdict:
    """A gate checked against a run: ``passed`` and the one line that says so."""

    gate: Gate
    passed: bool
    line: str


def check(gates: Sequence[Gate], kpis: Sequence[Kpi]) -> list[Verdict]:
    """Each gate against the run's KPIs; a KPI without a value fails with "no data"."""
    by_key = _keys(kpis)
    out = []
    for g in gates:
        kpi = by_key.get(g.kpi)
        if kpi is not None and kpi.unsupported:
            out.append(Verdict(g, False, f"gate failed: {g.kpi} {g.written}: unsupported by the engine "
                                         f"(no {kpi.unsupported}) ({g.source})"))
            continue
        if kpi is None or kpi.value is None:
            out.append(Verdict(g, False, f"gate failed: {g.kpi} {g.written}: no data ({g.source})"))
            continue
        passed = OPS[g.op](kpi.value, g.threshold)
        unit = "%" if kpi.unit == "pct" else " " + kpi.unit
        wanted = f" (i.e. {g.op} {g.threshold:.4g}%)" if kpi.unit == "pct" and not g.written.endswith("%") else ""
        word = "passed" if passed else "failed"
        out.append(Verdict(g, passed, f"gate {word}: {g.kpi} {g.written}{wanted}: is {kpi.value:.4g}{unit} "
                                      f"({g.source})"))
    return out
