"""The deterministic "models" behind the mock inference server; pure functions, no I/O.

- :func:`embed`: a hashed bag of words and character trigrams, L2-normalised, so texts sharing
  words or word pieces are somewhat close. Not semantic.
- :func:`schema_instance`: the value a structured-output call returns: the smallest instance of
  the JSON Schema, with top-level arrays of objects filled from the request's capitalised
  words (entity names) and its text (a MOCK extraction: a copy, never an understanding).
- :func:`object_reply`: the answer to a ``json_object`` call: a judge-shaped prompt's label
  (``{"label": "CORRECT"}`` or ``WRONG``, by :func:`judge_reply`), else ``{}``, except for a mem0-style
  extraction prompt, where every non-empty line of its ``## New Messages`` section (without the
  ``user:`` / ``assistant:`` prefix) comes back as one memory, ``{"memory": [{"text": …}]}``.
  A copy, not an extraction: it measures the wiring of an engine that calls a model, never the
  model's judgement.
- :func:`extractive_reply`: a plain chat answer TAKEN FROM THE CONTEXT: the context line
  sharing the most content words with the question, or ``unknown``.
- :func:`judge_reply`: a crude stand-in for an LLM judge (memeval's ``judge-v1`` prompt shape, and
  the benchmarks' judge prompts):
  ``yes`` iff the candidate answer holds every content word of the reference answer or of one
  acceptable alternative. Word order, numbers shorter than three digits, outdated values and
  negation are invisible to it, which makes it lenient in known, deterministic ways.
- :func:`approx_tokens`: the token estimate of the fake usage both loopback servers report.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

DEFAULT_DIMS = 256
UNKNOWN = "unknown"
CHAT_MODEL = "mock-chat"
"""The name every chat answer gives as its model, whatever the request asked for."""
EMBED_MODEL = "mock-embed"
"""The name every embeddings answer gives as its model."""

STOPWORDS = frozenset(
    (
        "the and are was were what which who whom whose when where why how does did has have had for with that "
        "this these those from into about your you our their its his her they them she him not but can could would "
        "should will shall may might there here then than any all some one two also just only very more most much many"
    ).split()
)
_WORD = re.compile(r"[a-z0-9]+")
_QUESTION = re.compile(r"^\s*question\s*:\s*", re.IGNORECASE)
_CANDIDATE = ("candidate answer", "model response", "assistant's response", "generated answer")
_REFERENCE = ("reference answer", "correct answer", "correct (current) answer", "gold answer")
_JUDGE_LINE = re.compile(r"^\s*(" + "|".join(re.escape(n) for n in (*_CANDIDATE, *_REFERENCE, "also acceptable"))
                         + r")\s*:\s*(.*)$", re.IGNORECASE)
_NEW_MESSAGES = "## New Messages"
_ROLE_PREFIX = re.compile(r"^(?:user|assistant|system):\s*", re.IGNORECASE)
_LINE_PREFIX = re.compile(r"^\s*(?:[-*]\s+)?(?:\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}\]\s*(?:[A-Za-z_]+:\s*)?)?")


def approx_tokens(text: str) -> int:
    """A deterministic token estimate: one per four characters, at least one."""
    return max(1, math.ceil(len(text) / 4))


def embed(text: str, dims: int = DEFAULT_DIMS) -> list[float]:
    """A unit vector of ``dims`` floats (all zeros for text without letters or digits)."""
    vector = [0.0] * dims
    for word in _WORD.findall(text.lower()):
        _add(vector, "w:" + word, 1.0)
        padded = f"#{word}#"
        for i in range(len(padded) - 2):
            _add(vector, "t:" + padded[i : i + 3], 0.5)
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else vector


def _add(vector: list[float], feature: str, weight: float) -> None:
    bits = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
    vector[bits % len(vector)] += weight if bits >> 63 else -weight


def schema_instance(schema: Any, text: str = "") -> Any:
    """The mock structured-output value for a JSON Schema (``$ref`` to ``#/$defs`` is followed).

    The smallest valid instance (const, default, first enum value, first ``anyOf``/``oneOf``/``allOf``
    branch, objects by all their properties, numbers 0, booleans false, strings ``"mock"``,
    arrays empty), except that an array of objects directly under the root object is filled
    from ``text``, the request's subject (:func:`subject_text`): with ``k`` name fields in the
    item (string properties called ``name`` or ``*_name``), it holds one item per run of ``k``
    consecutive names of :func:`names_in` (at most ``MAX_ITEMS``), each name field taking
    the next name and every other string field the subject text. So an entity extraction
    returns the capitalised words and an edge extraction links neighbouring ones with the
    sentence as the fact. A MOCK: it copies words, it understands nothing.
    """
    return _Instance(schema, names_in(text), text.strip()).value(schema, 0)


MAX_ITEMS = 8
_CAPITALISED = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:[ \t]+[A-Z][A-Za-z0-9]*)*")
_SUBJECTS = (re.compile(r"<(CURRENT[ _]MESSAGE)>\s*(.*?)\s*</\1>", re.DOTALL),
             re.compile(r"<(MESSAGES)>\s*(.*?)\s*</\1>", re.DOTALL))


def names_in(text: str) -> list[str]:
    """Runs of capitalised words on one line of ``text`` (``New York``; ``Alice's`` gives
    ``Alice``), first occurrence order, without repeats, leading stopwords (``The``, ``Then``)
    or ``I``."""
    found: list[str] = []
    for match in _CAPITALISED.finditer(text):
        words = match.group(0).split()
        while words and (words[0].lower() in STOPWORDS or words[0] == "I"):
            words.pop(0)
        name = " ".join(words)
        if name and name not in found:
            found.append(name)
    return found


def subject_text(messages: list[Any]) -> str:
    """What a structured-output call is about: the body of the last ``<CURRENT MESSAGE>`` (or
    ``<CURRENT_MESSAGE>``) section of the user messages, as Graphiti's prompts mark it, else of
    the last ``<MESSAGES>`` section, else the last user message."""
    users = [message_text(m) for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    for pattern in _SUBJECTS:
        sections = [m.group(2) for text in users for m in pattern.finditer(text)]
        if sections:
            return sections[-1]
    return users[-1] if users else ""


class _Instance:
    """Builds :func:`schema_instance`'s value; ``slot`` is the index of the item being filled
    (None outside a filled array)."""

    def __init__(self, root: Any, names: list[str], text: str) -> None:
        self.root, self.names, self.text = root, names, text

    def value(self, schema: Any, depth: int, slot: int | None = None) -> Any:
        schema = self._resolve(schema)
        if not isinstance(schema, dict):
            return None
        if "const" in schema:
            return schema["const"]
        if "default" in schema:
            return schema["default"]
        if schema.get("enum"):
            return schema["enum"][0]
        for combinator in ("anyOf", "oneOf", "allOf"):
            if schema.get(combinator):
                return self.value(schema[combinator][0], depth, slot)
        kind = schema.get("type", "object" if "properties" in schema else None)
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind == "object":
            return self._object(schema, depth, slot)
        if kind == "array":
            return self._items(schema.get("items"), depth) if depth == 1 else []
        return {"number": 0, "integer": 0, "boolean": False, "string": "mock"}.get(str(kind))

    def _object(self, schema: dict[str, Any], depth: int, slot: int | None) -> dict[str, Any]:
        result, used = {}, 0
        for name, sub in schema.get("properties", {}).items():
            if slot is not None and self._kind(sub) == "string":
                is_name = name == "name" or name.endswith("_name")
                result[name] = self.names[slot + used] if is_name else self.text
                used += is_name
            else:
                result[name] = self.value(sub, depth + 1, None)
        return result

    def _items(self, items: Any, depth: int) -> list[Any]:
        item = self._resolve(items)
        if self._kind(item) != "object":
            return []
        fields = [n for n, sub in item.get("properties", {}).items()
                  if self._kind(sub) == "string" and (n == "name" or n.endswith("_name"))]
        count = min(MAX_ITEMS, len(self.names) - len(fields) + 1) if fields else 0
        return [self._object(item, depth + 1, slot) for slot in range(count)]

    def _kind(self, schema: Any) -> Any:
        schema = self._resolve(schema)
        return schema.get("type", "object" if "properties" in schema else None) if isinstance(schema, dict) else None

    def _resolve(self, schema: Any) -> Any:
        while isinstance(schema, dict) and "$ref" in schema:
            node = self.root
            for part in str(schema["$ref"]).removeprefix("#/").split("/"):
                node = node.get(part) if isinstance(node, dict) else None
            schema = node
        return schema


def message_text(message: Any) -> str:
    """The text of a chat message whose content is a string or a list of text parts."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def content_words(text: str) -> set[str]:
    """Lower-cased words of 3+ characters that are not stopwords."""
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 3 and w not in STOPWORDS}


def split_question(messages: list[Any]) -> tuple[str, list[str]]:
    """(question, context lines) of a chat.

    The question is the text after the last ``Question:`` line of the user messages; the
    context is every non-assistant line before it. Without such a line the question is the
    last user message and the context every other non-assistant message.
    """
    texts = [(m.get("role") if isinstance(m, dict) else None, message_text(m)) for m in messages]
    others = [i for i, (role, _) in enumerate(texts) if role != "assistant"]
    users = [i for i in others if texts[i][0] == "user"]
    for i in reversed(users):
        lines = texts[i][1].splitlines()
        for j in reversed(range(len(lines))):
            if _QUESTION.match(lines[j]):
                question = "\n".join([_QUESTION.sub("", lines[j]), *lines[j + 1 :]])
                before = [line for k in others if k < i for line in texts[k][1].splitlines()]
                return question, before + lines[:j]
    if not users:
        return "", []
    last = users[-1]
    return texts[last][1], [line for k in others if k != last for line in texts[k][1].splitlines()]


def judge_reply(messages: list[Any]) -> str | None:
    """``yes`` or ``no`` when the last user message is judge-shaped, else None. Judge-shaped: a
    candidate line (``Candidate answer:``, or the benchmarks' ``Model Response:``, ``Assistant's
    response:``, ``Generated answer:``) and a reference line (``Reference answer:``, ``Correct
    answer:``, ``Gold answer:``; ``Also acceptable:`` lines are alternatives): yes iff the
    candidate holds every content word of a reference. A candidate without any reference line
    (LongMemEval's abstention prompt) is judged yes iff it says ``unknown``."""
    users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    fields = [_JUDGE_LINE.match(line) for line in message_text(users[-1]).splitlines()] if users else []
    found = [(m.group(1).lower(), m.group(2)) for m in fields if m]
    candidates = [text for name, text in found if name in _CANDIDATE]
    if not candidates:
        return None
    references = [text for name, text in found if name not in _CANDIDATE]
    if not any(name in _REFERENCE for name, _ in found):
        return "yes" if UNKNOWN in candidates[-1].lower() else "no"
    held = content_words(candidates[-1])
    return "yes" if any(content_words(r) <= held for r in references) else "no"


def object_reply(messages: list[Any]) -> dict[str, Any]:
    """The ``json_object`` answer for a chat (see the module docstring); deterministic."""
    verdict = judge_reply(messages)
    if verdict is not None:  # a judge asking for a JSON label, as mem0's J does
        return {"reasoning": "MOCK: a word-set comparison", "label": "CORRECT" if verdict == "yes" else "WRONG"}
    users = [message_text(m) for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    prompt = users[-1] if users else ""
    start = prompt.find(_NEW_MESSAGES)
    if start < 0:
        return {}
    section = prompt[start + len(_NEW_MESSAGES):].split("\n## ", 1)[0]
    lines = (_ROLE_PREFIX.sub("", line).strip() for line in section.splitlines())
    return {"memory": [{"text": line} for line in lines if line]}


def extractive_reply(messages: list[Any]) -> str:
    """The context line sharing the most content words with the question, cleaned of a
    leading ``- `` and a ``[YYYY-MM-DD HH:MM] role:`` prefix; ``unknown`` when none shares one.
    Ties go to the earliest line."""
    question, context = split_question(messages)
    wanted = content_words(question)
    best, best_hits = "", 0
    for line in context:
        hits = len(wanted & content_words(line))
        if hits > best_hits:
            best, best_hits = line, hits
    return _LINE_PREFIX.sub("", best).strip() if best_hits else UNKNOWN
