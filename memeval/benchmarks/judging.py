"""Judge prompts and judge calls, as values: no model is called here.

A :class:`JudgeRequest` says exactly what to send; a :class:`PromptTemplate` is a benchmark's
shipped prompt (package data of its subpackage) or a user's file, carried with its sha256 so a
judged number is never separated from the words that produced it. A template may use ``{}``
positionally as upstream prompts do, or ``{question}``, ``{answer}``/``{gold_answer}``,
``{response}``/``{generated_answer}``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from memeval.errors import UsageError


@dataclass(frozen=True)
class PromptTemplate:
    """A judge prompt: ``source`` is ``shipped`` or the user's file path; ``sha256`` of the text."""

    name: str
    text: str
    sha256: str
    source: str

    def render(self, question: str, answer: str, response: str) -> str:
        """The prompt with the question, gold answer (or rubric, or explanation) and response."""
        try:
            return self.text.format(question, answer, response, question=question, answer=answer,
                                    response=response, gold_answer=answer, generated_answer=response)
        except (IndexError, KeyError, ValueError) as err:
            raise UsageError(f"{self.source}: prompt template {self.name!r} cannot be filled ({err}); "
                             "use {question}, {answer}, {response} (or three {}), and {{ }} for braces") from None


@dataclass(frozen=True)
class JudgeRequest:
    """One judge call, fully specified: the grader, the template used, and the call's settings."""

    grader: str
    template: str
    template_sha256: str
    model: str
    prompt: str
    temperature: float
    max_tokens: int | None
    json_reply: bool


def _template(name: str, text: str, source: str) -> PromptTemplate:
    return PromptTemplate(name, text, hashlib.sha256(text.encode("utf-8")).hexdigest(), source)


def shipped_template(package: str, name: str) -> PromptTemplate:
    """The template ``prompts/<name>.txt`` shipped in ``package`` (a benchmark's subpackage).

    Raises:
        UsageError: the package ships no such prompt.
    """
    try:
        text = resources.files(package).joinpath(f"prompts/{name}.txt").read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"no shipped judge prompt named {name!r}") from None
    return _template(name, text, "shipped")


def template_file(path: str | Path) -> PromptTemplate:
    """A user's template file (its sha256 recorded in every request built from it).

    Raises:
        UsageError: the file cannot be read as UTF-8 text.
    """
    path = Path(path)
    try:
        return _template(path.stem, path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"{path}: cannot read the prompt template ({err})") from None
