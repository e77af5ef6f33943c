"""Evidence recall: which of a probe's evidence turns (cited by exchange id) reached its pack.

An id is found when the text that id wrote appears in the pack verbatim, so the figure reads the
same on every engine that returns stored text; an engine that rewrites memories gets no credit
for a rewritten turn (its recall is then a lower bound).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from memeval.record import ProbeResult
from memeval.spec.model import Probe, Scenario


def turn_texts(scenario: Scenario) -> dict[str, str]:
    """Each exchange id's text as written: the first id names the user turn, the second the reply."""
    texts: dict[str, str] = {}
    for thread in scenario.threads:
        for exchange in thread.exchanges:
            for turn_id, text in zip(exchange.ids, (exchange.user, exchange.reply or "")):
                texts[turn_id] = text
    return texts


def with_evidence(result: ProbeResult, probe: Probe, texts: dict[str, str]) -> ProbeResult:
    """``result`` with its evidence recall, for a scored probe that cites evidence."""
    if not probe.evidence or not result.scored or result.pack is None:
        return result
    cited = {i: texts[i] for i in probe.evidence if i in texts}
    return replace(result, evidence_recall=evidence_recall(probe.evidence, retrieved_ids(cited, result.pack)))


def evidence_recall(evidence: Iterable[str], retrieved: Iterable[str]) -> float | None:
    """The fraction of ``evidence`` ids among ``retrieved``; None for a question with no evidence
    (LoCoMo's upstream counts such rows as 1; memeval keeps them unscored)."""
    wanted = list(dict.fromkeys(evidence))
    if not wanted:
        return None
    found = set(retrieved)
    return sum(1 for e in wanted if e in found) / len(wanted)


def retrieved_ids(turn_texts: dict[str, str], context: str) -> set[str]:
    """The ids whose turn text appears verbatim in ``context`` (a pack), for
    :func:`evidence_recall` when the context does not print ids. An engine that rewrites memories
    gets none this way; its recall must be read off the ids it returns instead."""
    return {dia for dia, text in turn_texts.items() if text.strip() and text.strip() in context}
