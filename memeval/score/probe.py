"""Scoring one probe's pack (and answers) into its :class:`~memeval.record.ProbeResult`.

Statuses: ``scored`` (a leak-only probe is scored on its leak fields alone, and a judged probe
(gold, no expect) by a benchmark's judge grader alone: hit, rank and answers stay None, so
neither is ever a hit or a miss); ``unsupported`` (the engine lacks a capability the probe needs);
``errored`` (the call failed; ``reason`` says why). Only scored probes carry numbers; every
other field is null, never 0.
"""

from __future__ import annotations

import re
from dataclasses import replace

from memeval.agent.pack import units
from memeval.record import Phase, ProbeResult, ProbeStatus
from memeval.score.extractive import extract_answer
from memeval.score.match import contains, grade, holds_all
from memeval.spec.model import Probe

_UNKNOWN = re.compile(r"\b(unknown|don't know|do not know|not in (?:my )?memory|no information|not (?:been )?(?:stored|mentioned|recorded))\b", re.I)


def says_unknown(answer: str | None) -> bool:
    """Whether an answer abstains ("unknown", "I don't know", "not in memory", …). No answer at
    all is not an abstention: it is not graded."""
    return answer is not None and bool(_UNKNOWN.search(answer))


def unscored(scenario: str, probe: Probe, phase: Phase, status: ProbeStatus, reason: str) -> ProbeResult:
    """The result of a probe that could not be scored (``errored`` or ``unsupported``)."""
    return blank_result(scenario, probe, phase, status, reason)


def blank_result(scenario: str, probe: Probe, phase: Phase, status: ProbeStatus, reason: str | None) -> ProbeResult:
    """A result before anything is measured: the probe as the spec gave it, ``status`` and
    ``reason``, every measured field None (never 0)."""
    return ProbeResult(scenario=scenario, phase=phase, id=probe.id, route=probe.route, style=probe.style,
                       groups=tuple(probe.groups), abstain=probe.abstain, question=probe.question,
                       expect=tuple(probe.expect), accept=tuple(tuple(a) for a in probe.accept),
                       stale=tuple(probe.stale), forbid=tuple(probe.forbid), match=probe.match,
                       status=status, reason=reason, hit=None, rank=None, rr=None, section=None, stale_present=None,
                       stale_first=None, fresh_first=None, leak_checked=False, leak=None, leaked=(), invented=None,
                       answer=None, answer_ok=None, llm_answer=None, llm_ok=None, llm_tokens=None, llm_cost_usd=None,
                       captured=None, ms=None, tokens=None, units=None, pack=None, category=probe.category,
                       asked_at=probe.asked_at, gold=probe.gold)


def score_pack(scenario: str, probe: Probe, phase: Phase, markdown: str, tokens: int, ms: float,
               derived: list[str] | None) -> ProbeResult:
    """Score a pack against the probe. ``derived`` holds the engine's fact and belief lines after
    synthesis (None when the engine cannot be inspected or in the recall phase)."""
    mode = probe.match
    found = units(markdown)
    answer = extract_answer(markdown, probe.question)
    result = replace(blank_result(scenario, probe, phase, "scored", None), ms=round(ms, 3), tokens=tokens, units=len(found),
                     pack=markdown, answer=answer, answer_ok=grade_answer(probe, answer, extractive=True))
    forbidden = tuple(s for s in probe.forbid if contains(markdown, s, mode))
    if leak_only(probe):
        result = replace(result, leak_checked=True, leak=bool(forbidden), leaked=forbidden)
    elif judged_only(probe):  # nothing a pack can hold: the judge grader reads the model's answer
        if probe.forbid:
            result = replace(result, leak_checked=True, leak=bool(forbidden), leaked=forbidden)
    elif probe.abstain and not probe.forbid:  # answer_only: nothing to check in the pack or the extract
        result = replace(result, answer_ok=None)
    elif probe.abstain:
        result = replace(result, invented=bool(forbidden), leaked=forbidden)
    else:
        result = _ranked(result, probe, found, markdown)
        if probe.forbid:
            result = replace(result, leak_checked=True, leak=bool(forbidden), leaked=forbidden)
    if derived is not None and probe.expect:
        joined = "\n".join(derived)
        captured = holds_all(joined, probe.expect, mode) or any(holds_all(joined, a, mode) for a in probe.accept)
        result = replace(result, captured=captured)
    return result


def probe_from_record(result: ProbeResult) -> Probe:
    """The parts of a Probe that grading reads, rebuilt from its recorded result."""
    return Probe(id=result.id, route=result.route, agent="", tenant="", question=result.question, style=result.style,
                 expect=result.expect, accept=result.accept, stale=result.stale, forbid=result.forbid,
                 abstain=result.abstain, groups=result.groups, match=result.match, category=result.category,
                 gold=result.gold)


def leak_only(probe: Probe) -> bool:
    """Whether the probe checks leaks only: no expectation, abstention or gold (what a recorded
    result of a ``leak_only`` probe looks like, so regrading reads it the same way)."""
    return not probe.expect and not probe.abstain and probe.gold is None


def judged_only(probe: Probe | ProbeResult) -> bool:
    """Whether only a benchmark's judge grader scores the probe: a gold answer (a rubric) but no
    expectation a pack or matcher could check, and no abstention."""
    return not probe.expect and not probe.abstain and probe.gold is not None


def grade_answer(probe: Probe, answer: str | None, extractive: bool = False) -> bool | None:
    """Grade an answer. For an abstention probe a model must say it does not know and invent
    nothing; the extractive answerer cannot abstain, so it only must not invent. A leak-only
    probe, and a judged one (its judge grader grades it), grade no answer (None)."""
    if leak_only(probe) or judged_only(probe):
        return None
    if probe.abstain:
        invented = answer is not None and any(contains(answer, s, probe.match) for s in probe.forbid)
        return not invented if extractive else (says_unknown(answer) and not invented)
    if answer is None:
        return False
    return grade(answer, probe.expect, probe.accept, probe.stale, probe.match)


def _ranked(result: ProbeResult, probe: Probe, found: list[tuple[str, str]], markdown: str) -> ProbeResult:
    """``result`` with the ranking of the expected (and any stale) value in the pack's units."""
    mode = probe.match
    rank = next((i for i, (_, text) in enumerate(found, 1) if contains(text, probe.expect[0], mode)), None)
    hit = holds_all(markdown, probe.expect, mode)
    result = replace(result, hit=hit, rank=rank, rr=round(1.0 / rank, 6) if rank else 0.0,
                     section=found[rank - 1][0] if rank else None)
    if probe.stale:
        stale_rank = next((i for i, (_, text) in enumerate(found, 1) if any(contains(text, s, mode) for s in probe.stale)), None)
        stale_first = stale_rank is not None and (rank is None or stale_rank < rank)
        result = replace(result, stale_present=stale_rank is not None, stale_first=stale_first,
                         fresh_first=hit and not stale_first)
    return result
