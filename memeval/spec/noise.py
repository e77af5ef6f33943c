"""Haystack noise: distractor documents written to every tenant before a scenario's own items,
so that a pack of a few hundred tokens must be *retrieved* from a haystack many times its size.

A suite declares it once::

    noise:
      seed: 7            # the same seed gives the same distractors, to the byte
      tokens: 12000      # per tenant of every scenario (chars / 4, as haystacks are measured)
      file: noise.txt    # optional: draw paragraphs (blank-line separated) from this file in the
                         # suite's folder instead of generating them

Generated distractors are routine office notes built from fixed word lists by
``random.Random(f"{seed}:{scenario}:{tenant}")``; drawn ones are the file's paragraphs in a
seeded order, repeated when the file is shorter than the size asked for. Either way a sentence
(or paragraph) that holds any string a probe of the scenario expects, accepts, calls stale or
forbids is left out, so noise can neither answer a probe nor leak into one. The documents look
like any other to the engine (ids ``d`` + 12 seeded hex digits, source ``drive``: nothing marks
them as noise, so no engine can skip them), are dated day 0 and placed before the scenario's own
documents (so written first); the run records the block in its scoring setup (``noise``).
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace

from memeval.vocab import DocumentSource
from memeval.spec import model as m

_GROUPED = re.compile(r"(?<=\d)[,.\u202f\u00a0'](?=\d{3})")
_MARKS = re.compile(r"[^a-z0-9]+")
SOURCE: DocumentSource = "drive"
"""The source distractors are written from: a real one, so that nothing tells them apart."""
CHARS_PER_TOKEN = 4
DOC_CHARS = 600
"""About how long one distractor document is (150 tokens)."""
_WHO = ("The facilities team", "Our landlord", "The night porter", "The canteen supplier", "The IT helpdesk",
        "The print room", "The fleet coordinator", "The reception desk", "The cleaning contractor",
        "The events committee", "The sustainability group", "The mailroom", "The parking office",
        "The security desk", "The wellbeing officer", "The archive clerk")
_DID = ("rescheduled", "inspected", "repainted", "restocked", "reorganised", "audited", "relabelled",
        "catalogued", "serviced", "measured", "photographed", "tidied", "recalibrated", "inventoried")
_WHAT = ("ceiling lights", "coffee machines", "bicycle racks", "meeting room chairs", "window blinds",
         "plant pots", "notice boards", "water coolers", "visitor badges", "locker keys", "fire blankets",
         "door hinges", "shelf brackets", "kettle descalers", "umbrella stands", "desk lamps")
_WHERE = ("on the third floor", "in the east stairwell", "near the loading bay", "in the basement corridor",
          "by the garden entrance", "in the library annex", "behind the cafeteria", "in the west wing",
          "next to the gym", "in the old boardroom", "on the mezzanine", "by the bike shed")
_WHEN = ("before the spring fair", "after the quarterly drill", "during the long weekend", "ahead of the audit",
         "once the scaffolding is down", "at the end of the month", "when the vans return", "after lunch")
_NOTE = ("Nobody needs to act on this.", "The old ones went to recycling.", "Ask the porter for the spare set.",
         "The invoice went to the usual cost centre.", "Photos are on the shared drive.",
         "The next check is in six weeks.", "Feedback from staff was mostly positive.", "Two items were missing.")
_TOPIC = ("Weekly facilities note", "Building log", "Housekeeping update", "Site bulletin", "Office notice",
          "Maintenance round", "Premises memo", "Caretaker's diary")


def read_noise(block: dict[str, object], suite_path: str) -> m.Noise:
    """The suite's ``noise:`` block, its file (if any) read from the suite's folder.

    Raises:
        ValueError: the file lies outside the suite's folder, cannot be read, or has no paragraph
            (one line, naming it).
    """
    seed, tokens, name = int(block["seed"]), int(block["tokens"]), block.get("file")  # type: ignore[call-overload]
    if name is None:
        return m.Noise(seed, tokens)
    folder = os.path.realpath(os.path.dirname(os.path.abspath(suite_path)))
    path = os.path.realpath(os.path.join(folder, str(name)))
    if os.path.commonpath([folder, path]) != folder:
        raise ValueError(f"noise.file {name!r} is outside the suite's folder")
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as err:
        raise ValueError(f"noise.file {name!r} cannot be read: {err.strerror}") from None
    paragraphs = tuple(" ".join(p.split()) for p in text.split("\n\n") if p.strip())
    if not paragraphs:
        raise ValueError(f"noise.file {name!r} holds no paragraph")
    return m.Noise(seed, tokens, path, paragraphs)


def _normal(text: str) -> str:
    """Lower case, digit groups joined (6,500 → 6500), every other mark a space, spaces single."""
    return " ".join(_MARKS.sub(" ", _GROUPED.sub("", text.lower())).split())


def _avoided(scenario: m.Scenario) -> list[str]:
    """Every string a probe of the scenario looks for or forbids, normalised (:func:`_normal`)."""
    found = (s for p in scenario.probes for s in (*p.expect, *(a for alt in p.accept for a in alt), *p.stale, *p.forbid))
    return [n for n in (_normal(s) for s in found) if n]


def _clean(text: str, avoid: Sequence[str]) -> bool:
    """No avoided string inside the normalised text, even within a word: stricter than any match
    mode a probe can use (word or substring), so noise never holds what a probe checks for."""
    normal = _normal(text)
    return not any(a in normal for a in avoid)


def _sentence(rng: random.Random) -> str:
    return (f"{rng.choice(_WHO)} {rng.choice(_DID)} the {rng.choice(_WHAT)} {rng.choice(_WHERE)} "
            f"{rng.choice(_WHEN)}. {rng.choice(_NOTE)}")


def _pieces(noise: m.Noise, rng: random.Random) -> Iterator[str]:
    """Endless pieces of text: the file's paragraphs in a seeded order, else generated sentences."""
    if noise.paragraphs:
        order = list(noise.paragraphs)
        rng.shuffle(order)
        while True:
            yield from order
    while True:
        yield _sentence(rng)


def _texts(noise: m.Noise, rng: random.Random, avoid: Sequence[str]) -> list[str]:
    """Document texts of about :data:`DOC_CHARS` each, ``noise.tokens`` in all (fewer when
    nearly every piece holds a probe's string: at most as many pieces are tried as the budget
    has characters)."""
    budget = noise.tokens * CHARS_PER_TOKEN
    texts: list[str] = []
    body: list[str] = []
    written = 0
    for tries, piece in enumerate(_pieces(noise, rng)):
        if written >= budget or tries > budget:
            break
        if not _clean(piece, avoid):
            continue
        body.append(piece)
        written += len(piece) + 1
        if sum(len(b) + 1 for b in body) >= DOC_CHARS:
            texts.append(" ".join(body))
            body = []
    if body:
        texts.append(" ".join(body))
    return texts


def with_noise(scenario: m.Scenario, noise: m.Noise) -> m.Scenario:
    """``scenario`` with its distractor documents before its own, per tenant (see module docstring)."""
    avoid = _avoided(scenario)
    docs = []
    for tenant in scenario.tenants:
        rng = random.Random(f"{noise.seed}:{scenario.id}:{tenant}")
        for n, text in enumerate(_texts(noise, rng, avoid), start=1):
            docs.append(m.Document(f"d{rng.getrandbits(48):012x}", tenant, SOURCE, f"{rng.choice(_TOPIC)} {n}", text, 0))
    return replace(scenario, documents=(*docs, *scenario.documents))
