"""LongMemEval's judge (``src/evaluation/evaluate_qa.py``) as requests and verdicts: one prompt
per question type, the abstention prompt for any ``_abs`` question whatever its type (choosing
by type instead grades abstention with the wrong rubric), every prompt ending "Answer yes or no
only.", temperature 0, 10 tokens, verdict ``'yes' in reply.lower()``, judge ``gpt-4o-2024-08-06``.

The shipped prompts (``prompts/``) are memeval's own words for the upstream criteria. Exact
reproduction needs the authors' wording: a suite's ``prompts:`` point at the user's templates
(:func:`memeval.benchmarks.judging.template_file`), and every request carries its template's sha256.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memeval.benchmarks.base import GraderInfo, JudgeGrader
from memeval.benchmarks.judging import JudgeRequest, PromptTemplate, shipped_template, template_file
from memeval.benchmarks.longmemeval.model import LONGMEMEVAL_TYPES
from memeval.errors import UsageError
from memeval.record import ProbeResult

LONGMEMEVAL_JUDGE = GraderInfo(
    "longmemeval-judge", "1", "longmemeval", "xiaowu0162/LongMemEval", "src/evaluation/evaluate_qa.py",
    "b11ff723381cf41e744c5524be0c52b3a408516c",
    "one yes/no prompt per question type (temporal-reasoning forgives off-by-one day counts; knowledge-update "
    "accepts old values beside the updated answer; single-session-preference graded on a rubric); any _abs "
    "question gets the unanswerable prompt; temperature 0, max_tokens 10; correct iff 'yes' in reply.lower()")

LONGMEMEVAL_JUDGE_MODEL = "gpt-4o-2024-08-06"
ABSTENTION = "abstention"
LME_PROMPT_KEYS = (*LONGMEMEVAL_TYPES, ABSTENTION)
"""The keys a suite may point at its own LongMemEval template: a question type, or ``abstention``."""
_SHARED = frozenset({"single-session-user", "single-session-assistant", "multi-session"})
# upstream judges these three types with one prompt: memeval ships it once, as lme-answer


def shipped(name: str) -> PromptTemplate:
    """A template shipped under ``memeval/benchmarks/longmemeval/prompts/`` by name (``lme-answer`` …)."""
    return shipped_template(__package__ or "memeval.benchmarks.longmemeval", name)


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
    defaults = {key: shipped("lme-answer" if key in _SHARED else f"lme-{key}") for key in LME_PROMPT_KEYS
                if key not in overrides}
    return {key: template_file(overrides[key]) if key in overrides else defaults[key] for key in LME_PROMPT_KEYS}


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


def _plan(p: ProbeResult, templates: Mapping[str, PromptTemplate], model: str) -> JudgeRequest | str:
    if p.category not in LONGMEMEVAL_TYPES:
        return f"not judged: {p.category!r} is not a LongMemEval question type"
    gold = p.gold or (p.expect[0] if p.expect else None)
    if gold is None:
        return "not judged: no gold answer in the file"
    return lme_request(templates, p.category or "", p.abstain, p.question, gold, p.llm_answer or "", model)


JUDGE = JudgeGrader(
    info=LONGMEMEVAL_JUDGE, measure="accuracy", official_model=LONGMEMEVAL_JUDGE_MODEL, max_tokens=10,
    json_reply=False, template_keys=LME_PROMPT_KEYS, no_verdict="no verdict: the judge's reply is empty",
    skipped=None, templates=lme_templates, plan=_plan, verdict=lme_verdict)
"""The ``longmemeval-judge`` grader."""
