"""LLM-judge requests for the benchmarks' judged scores, and their verdicts. No model is called
here: a :class:`JudgeRequest` says exactly what to send, and the verdict functions read a reply.

- LongMemEval (``src/evaluation/evaluate_qa.py``): one prompt per question type, the abstention
  prompt for any ``_abs`` question whatever its type (choosing by type instead grades abstention
  with the wrong rubric), every prompt ending "Answer yes or no only.", temperature 0, 10 tokens,
  verdict ``'yes' in reply.lower()``, judge ``gpt-4o-2024-08-06``.
- LoCoMo's J as mem0 computes it (``evaluation/metrics/llm_judge.py``): a generous prompt,
  ``gpt-4o-mini``, temperature 0, a JSON object reply whose ``label`` is ``CORRECT``; category 5
  is skipped.

The shipped prompts (``prompts/``) are memeval's own words for the upstream criteria. Exact
reproduction needs the authors' wording: :func:`template_file` loads a user's template (it may
use ``{}`` positionally as upstream does, or ``{question}``, ``{answer}``/``{gold_answer}``,
``{response}``/``{generated_answer}``), and every request carries its template's sha256.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from memeval.datasets.graders import GraderInfo
from memeval.datasets.model import LONGMEMEVAL_TYPES
from memeval.errors import UsageError

LONGMEMEVAL_JUDGE = GraderInfo(
    "longmemeval-judge", "1", "longmemeval", "xiaowu0162/LongMemEval", "src/evaluation/evaluate_qa.py",
    "b11ff723381cf41e744c5524be0c52b3a408516c",
    "one yes/no prompt per question type (temporal-reasoning forgives off-by-one day counts; knowledge-update "
    "accepts old values beside the updated answer; single-session-preference graded on a rubric); any _abs "
    "question gets the unanswerable prompt; temperature 0, max_tokens 10; correct iff 'yes' in reply.lower()")
LOCOMO_J = GraderInfo(
    "mem0-j", "1", "locomo", "mem0ai/mem0", "evaluation/metrics/llm_judge.py",
    "2352a44193bd0e36cd544fc5664cbee14e020bc2",
    "a generous CORRECT/WRONG prompt (same topic or same date counts), gpt-4o-mini, temperature 0, JSON reply; "
    "correct iff label == 'CORRECT'; category 5 skipped")

LONGMEMEVAL_JUDGE_MODEL = "gpt-4o-2024-08-06"
MEM0_JUDGE_MODEL = "gpt-4o-mini"
ABSTENTION = "abstention"
LME_PROMPT_KEYS = (*LONGMEMEVAL_TYPES, ABSTENTION)
"""The keys a suite may point at its own LongMemEval template: a question type, or ``abstention``."""
J_PROMPT_KEY = "j"
"""The key of mem0's J template in a suite's ``prompts:``."""
TEMPLATE_KEYS = {"longmemeval-judge": LME_PROMPT_KEYS, "mem0-j": (J_PROMPT_KEY,)}
"""The ``prompts:`` keys each judge grader reads."""
JUDGED_FORMAT = {"longmemeval-judge": "longmemeval", "mem0-j": "locomo"}
"""The benchmark each judge grader belongs to."""
GRADER_FORMAT = {**JUDGED_FORMAT, "locomo-f1": "locomo"}
"""The benchmark each grader but ``memeval`` (memeval's own matcher, any benchmark) belongs to."""
OFFICIAL = {"longmemeval": "longmemeval-judge", "locomo": "locomo-f1"}
"""Each benchmark's official grader, which ``memeval import`` writes (LoCoMo's alternative is
mem0's J, ``mem0-j``, a separately named score)."""
_SHARED = frozenset({"single-session-user", "single-session-assistant", "multi-session"})
# upstream judges these three types with one prompt: memeval ships it once, as lme-answer


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


def shipped_template(name: str) -> PromptTemplate:
    """A template under ``memeval/datasets/prompts/`` by name (``lme-answer``, ``mem0-j`` …)."""
    try:
        text = resources.files("memeval.datasets").joinpath(f"prompts/{name}.txt").read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"no shipped judge prompt named {name!r}") from None
    return _template(name, text, "shipped")


def template_file(path: str | Path) -> PromptTemplate:
    """A user's template file (its sha256 recorded in every request built from it)."""
    path = Path(path)
    try:
        return _template(path.stem, path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"{path}: cannot read the prompt template ({err})") from None


def lme_templates(overrides: Mapping[str, str | Path] | None = None) -> dict[str, PromptTemplate]:
    """The LongMemEval prompt for each key of :data:`LME_PROMPT_KEYS` (single-session-user,
    -assistant and multi-session share the shipped ``lme-answer``), with user files in ``overrides``.

    Raises:
        UsageError: an unknown key, or a file that cannot be read.
    """
    overrides = overrides or {}
    unknown = sorted(set(overrides) - set(LME_PROMPT_KEYS))
    if unknown:
        raise UsageError(f"unknown LongMemEval prompt key(s) {', '.join(unknown)}; expected {', '.join(LME_PROMPT_KEYS)}")
    shipped = {key: shipped_template("lme-answer" if key in _SHARED else f"lme-{key}") for key in LME_PROMPT_KEYS
               if key not in overrides}
    return {key: template_file(overrides[key]) if key in overrides else shipped[key] for key in LME_PROMPT_KEYS}


def lme_prompt_key(question_type: str, abstention: bool) -> str:
    """Which prompt judges a question: the abstention prompt for any abstention (``_abs``)
    question, whatever its type; else its type's.

    Raises:
        UsageError: a question type LongMemEval does not have.
    """
    if question_type not in LONGMEMEVAL_TYPES:
        raise UsageError(f"unknown LongMemEval question type {question_type!r}")
    return ABSTENTION if abstention else question_type


def lme_request(templates: Mapping[str, PromptTemplate], question_type: str, abstention: bool, question: str,
                answer: str, response: str, model: str = LONGMEMEVAL_JUDGE_MODEL) -> JudgeRequest:
    """The judge call for one LongMemEval answer (``answer``: the gold answer, an abstention
    question's explanation, or a preference question's rubric)."""
    template = templates[lme_prompt_key(question_type, abstention)]
    return JudgeRequest(LONGMEMEVAL_JUDGE.name, template.name, template.sha256, model,
                        template.render(question, answer, response), temperature=0.0, max_tokens=10, json_reply=False)


def lme_verdict(reply: str) -> bool | None:
    """LongMemEval's verdict: correct iff ``yes`` occurs anywhere in the lowercased reply. None
    for an empty reply: the judge said nothing, which is no verdict, not a wrong answer."""
    if not reply.strip():
        return None
    return "yes" in reply.lower()


def j_applies(category: int) -> bool:
    """Whether mem0's J scores a LoCoMo category (it skips category 5)."""
    return category != 5


def j_request(template: PromptTemplate, question: str, gold: str, response: str,
              model: str = MEM0_JUDGE_MODEL) -> JudgeRequest:
    """The judge call for one LoCoMo answer under mem0's J."""
    return JudgeRequest(LOCOMO_J.name, template.name, template.sha256, model,
                        template.render(question, gold, response), temperature=0.0, max_tokens=None, json_reply=True)


def j_verdict(reply: str) -> bool | None:
    """mem0's J verdict: the reply's JSON object's ``label`` equals ``CORRECT`` (so ``INCORRECT``
    is wrong, never a substring match). None when the reply holds no such object: unjudged,
    not wrong."""
    match = re.search(r"\{.*\}", reply, re.DOTALL)
    if not match:
        return None
    try:
        label = json.loads(match.group(0)).get("label")
    except (json.JSONDecodeError, AttributeError):
        return None
    return label == "CORRECT" if isinstance(label, str) else None  # exact, as upstream compares
