"""An LLM judge beside the substring grader, checked for leniency before it judges.

The judge sees the question, the reference answer (``expect``, or "unknown" for an abstention
probe), the acceptable alternatives, the outdated values and a candidate answer, and replies
yes or no (prompt ``judge-v1``). A reply whose first word is neither is no verdict (null).

**Leniency check.** Before judging, the judge grades planted answers that are wrong but on
topic, built from the run's own probes (each probe once, whatever its phases), at most
:data:`LENIENCY_MAX`: for a probe with an expectation, its first stale value, "unknown", and
the other probe's expected answer sharing the most words with this one; for an abstention
probe, its first forbidden string and the most similar other expected answer. A planted answer
is kept only if the substring grader also calls it wrong. The judge must reject them all; the
record keeps how many it rejected out of how many it gave a verdict on, and which it accepted.

Then every model answer is judged: ``llm_judge_ok`` per probe, every probe of the run (null when
not answered or no verdict), acceptance ``{k, n}`` and agreement with ``llm_ok`` ``{agree, n, kappa}``
(Cohen's κ: agreement beyond what two raters with these yes-rates would reach by chance).

With ``repeats`` N > 1 (``--judge-repeats``) every model answer is judged N times, each repeat
under its own cache salt (:mod:`memeval.llm.consistency`); the first repeat's verdicts are the
ones recorded, and ``consistency`` holds the unanimity rate and Fleiss' κ over the repeats.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from memeval.llm.client import Batch, Reply, spent
from memeval.llm.consistency import judge_rounds, rounds_consistency
from memeval.llm.settings import CacheSettings, ModelSettings
from memeval.record import (Agreement, Count, JudgeMark, JudgeSummary, Leniency, ModelSide, Planted, ProbeResult,
                            RunRecord)
from memeval.record.codec import from_json
from memeval.stats.clustered import cohen_kappa
from memeval.score.probe import grade_answer, judged_only, probe_from_record

LENIENCY_MAX = 40
_WORD = re.compile(r"[a-z0-9]+")
Plant = tuple[ProbeResult, str, str]


def judge_record(record: RunRecord, settings: ModelSettings, cache: CacheSettings, repeats: int = 1) -> RunRecord:
    """``record`` after the leniency check and a verdict on every model answer: each probe gets
    its ``llm_judge_ok`` and the answerer its ``judge`` summary. Never raises for a refusing
    endpoint: ``stopped`` says why and the rest stays null.

    Raises:
        ValueError: the record has no answerer (there is nothing to judge).
    """
    if record.answerer is None:
        raise ValueError("judge_record: the run has no model answers")
    planted = planted_answers(record.probes)
    # a judged probe's gold is a rubric only its benchmark's judge grader reads: --judge has no reference
    answered = [p for p in record.probes if p.scored and p.llm_answer is not None and not judged_only(p)]
    batch = Batch(settings, cache)
    try:
        checks = batch.run([job(probe, answer) for probe, _, answer in planted])
        jobs = [job(p, p.llm_answer or "") for p in answered]
        rounds = judge_rounds(batch, jobs, cache.salt, repeats)
    finally:
        batch.close()
    results = rounds[0]
    verdicts = {p.key: verdict(result) for p, result in zip(answered, results)}
    probes = tuple(replace(p, judge=JudgeMark(verdicts.get(p.key))) for p in record.probes)
    judged = [p for p in probes if p.scored and p.llm_answer is not None]
    pairs = [(p.judged_ok, p.llm_ok) for p in judged if p.judged_ok is not None and p.llm_ok is not None]
    replies = [r for r in checks + [x for repeat in rounds for x in repeat] if isinstance(r, Reply)]
    totals = spent(replies)
    side = from_json(ModelSide, batch.summary(), "judge")  # the client's settings and spend: its JSON edge
    summary = JudgeSummary(
        **vars(side), calls=len(replies), tokens=totals["tokens"], cost_usd=totals["cost_usd"],
        accepted=Count(sum(1 for p in judged if p.judged_ok), sum(1 for p in judged if p.judged_ok is not None)),
        agreement=Agreement(sum(1 for j, g in pairs if j == g), len(pairs),
                            cohen_kappa({p.key: p.judged_ok for p in judged}, {p.key: p.llm_ok for p in judged}).kappa),
        leniency=_leniency(planted, checks),
        stopped=f"judge stopped: {batch.stopped}" if batch.stopped else None,
        consistency=rounds_consistency(rounds, verdict))
    return replace(record, probes=probes, answerer=replace(record.answerer, judge=summary))


def job(probe: ProbeResult, candidate: str) -> dict[str, str]:
    """The judge template's variables for one candidate answer to ``probe``."""
    alternatives = ["; ".join(a) for a in probe.accept]
    first = alternatives.pop(0) if alternatives and not probe.expect else ""
    reference = "unknown" if probe.abstain else "; ".join(probe.expect) or first
    return {"question": probe.question, "reference": reference, "alternatives": "\n".join(alternatives),
            "stale": "; ".join(probe.stale), "candidate": candidate}


def verdict(result: Reply | str | None) -> bool | None:
    """True for a reply starting with "yes", False for "no", else None (no verdict)."""
    if not isinstance(result, Reply):
        return None
    words = _WORD.findall(result.text.lower())
    return {"yes": True, "no": False}.get(words[0]) if words else None


def planted_answers(probes: tuple[ProbeResult, ...]) -> list[Plant]:
    """The leniency check's (probe, kind, wrong answer) triples; see the module docstring."""
    seen: dict[tuple[str, str], ProbeResult] = {}
    for p in probes:
        if p.scored and (p.expect or p.accept or p.abstain):
            seen.setdefault((p.scenario, p.id), p)
    unique = list(seen.values())
    out = []
    for i, probe in enumerate(unique):
        out += [(probe, kind, answer) for kind, answer in _plants(probe, unique[i + 1:] + unique[:i])]
    return out[:LENIENCY_MAX]


def _plants(probe: ProbeResult, others: list[ProbeResult]) -> Iterator[tuple[str, str]]:
    """(kind, answer) for each answer planted for ``probe``: only those the grader calls wrong."""
    spec = probe_from_record(probe)
    if probe.abstain:
        fixed = [("invented", probe.forbid[0])] if probe.forbid else []
    else:
        fixed = ([("stale", probe.stale[0])] if probe.stale else []) + [("unknown", "unknown")]
    yield from ((kind, answer) for kind, answer in fixed if not grade_answer(spec, answer))
    other = next((answer for answer in _topical(probe, others) if not grade_answer(spec, answer)), None)
    if other is not None:
        yield "other probe's answer", other


def _topical(probe: ProbeResult, others: list[ProbeResult]) -> list[str]:
    """Other probes' expected answers, most words shared with ``probe`` first (stable)."""
    words = _words(" ".join([probe.question, *probe.expect]))
    answers = ["; ".join(o.expect) for o in others if o.expect and not o.abstain]
    return sorted(answers, key=lambda a: -len(words & _words(a)))


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _leniency(planted: list[Plant], checks: list[Reply | str | None]) -> Leniency:
    verdicts = [(p, verdict(r)) for p, r in zip(planted, checks)]
    judged = [(p, v) for p, v in verdicts if v is not None]
    accepted = tuple(Planted(p[0].scenario, p[0].id, p[1], p[2]) for p, v in judged if v)
    return Leniency(rejected=len(judged) - len(accepted), n=len(judged), planted=len(planted), accepted=accepted)
