"""Expectations grounded in what a scenario writes.

An ``expect``, ``stale`` or ``accept`` string that no text of the probe's tenant holds (after the
scenario's ``forget:``) can never be found in a pack: it is a typo ("Foundery Park") or a probe
that cannot pass, and would only show up later as an engine miss. :func:`ungrounded` finds them
with the scorer's own matching (:func:`memeval.score.match.contains`, the probe's ``match``
mode), so what it accepts is exactly what scoring can find. Abstention probes are not checked:
their ``forbid`` strings are meant never to be written.
"""

from __future__ import annotations

import re

from memeval.errors import SpecIssue
from memeval.score.match import contains
from memeval.spec.model import Probe, Scenario, Suite
from memeval.util.suggest import did_you_mean

_WORD = re.compile(r"[\w][\w.,'’-]*[\w]|[\w]")


def written(scenario: Scenario, tenant: str) -> list[str]:
    """Every text the scenario leaves in ``tenant``'s memory: documents (title and text),
    learnings, user turns and replies (a scripted reply carries its tools' carried results),
    leaving out what ``forget:`` names."""
    gone = set(scenario.forget)
    texts = [f"{d.title}\n{d.text}" for d in scenario.documents if d.tenant == tenant and d.id not in gone]
    texts += [x.text for x in scenario.learnings if x.tenant == tenant and x.id not in gone]
    for thread in scenario.threads:
        if thread.tenant != tenant or thread.id in gone:
            continue
        for ex in thread.exchanges:
            texts.append(ex.user)
            texts.append(ex.reply if ex.reply is not None else "\n".join(t.result for t in ex.tools if t.carried))
    return texts


def ungrounded(suite: Suite) -> list[SpecIssue]:
    """One issue per expectation string its scenario never writes, at the probe."""
    issues = []
    for scenario in suite.scenarios:
        texts: dict[str, list[str]] = {}
        for probe in scenario.probes:
            kept = texts.setdefault(probe.tenant, written(scenario, probe.tenant))
            for where, needle in _needles(probe):
                if not any(contains(t, needle, probe.match) for t in kept):
                    issues.append(_issue(scenario, probe, where, needle, kept))
    return issues


def _needles(probe: Probe) -> list[tuple[str, str]]:
    found = [(f"expect[{i}]", n) for i, n in enumerate(probe.expect)]
    found += [(f"stale[{i}]", n) for i, n in enumerate(probe.stale)]
    for i, alt in enumerate(probe.accept):
        found += [(f"accept[{i}]" if len(alt) == 1 else f"accept[{i}][{j}]", n) for j, n in enumerate(alt)]
    return found


def _issue(scenario: Scenario, probe: Probe, where: str, needle: str, kept: list[str]) -> SpecIssue:
    origin = probe.origin
    file, line, column, path = (origin.file, origin.line, origin.column, origin.path) if origin else (scenario.id, 0, 0, "")
    after = " (after its forget:)" if scenario.forget else ""
    message = (f"{needle!r} is never written to tenant {probe.tenant!r} by scenario {scenario.id!r}{after}"
               f"{did_you_mean(needle, _phrases(kept, len(needle.split())))}; the probe can never find it")
    return SpecIssue(file, line, column, f"{path}.{where}" if path else where, message)


def _phrases(texts: list[str], words: int) -> set[str]:
    """Runs of ``words`` consecutive words in ``texts``: the candidates for a did-you-mean."""
    out: set[str] = set()
    for text in texts:
        tokens = _WORD.findall(text)
        out.update(" ".join(tokens[i:i + words]) for i in range(len(tokens) - words + 1))
    return out
