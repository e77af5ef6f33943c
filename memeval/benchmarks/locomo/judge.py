"""LoCoMo's J as mem0 computes it (``evaluation/metrics/llm_judge.py``) as requests and verdicts:
a generous prompt, ``gpt-4o-mini``, temperature 0, a JSON object reply whose ``label`` is
``CORRECT``; category 5 is skipped.

The shipped prompt (``prompts/mem0-j.txt``) is memeval's own words for the upstream criteria; a
suite's ``prompts: {j: FILE}`` points at the authors' wording, and every request carries its
template's sha256.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from memeval.benchmarks.base import GraderInfo, JudgeGrader
from memeval.benchmarks.judging import JudgeRequest, PromptTemplate, shipped_template, template_file
from memeval.benchmarks.locomo.model import LOCOMO_IDS
from memeval.record import ProbeResult

LOCOMO_J = GraderInfo(
    "mem0-j", "1", "locomo", "mem0ai/mem0", "evaluation/metrics/llm_judge.py",
    "2352a44193bd0e36cd544fc5664cbee14e020bc2",
    "a generous CORRECT/WRONG prompt (same topic or same date counts), gpt-4o-mini, temperature 0, JSON reply; "
    "correct iff label == 'CORRECT'; category 5 skipped")

MEM0_JUDGE_MODEL = "gpt-4o-mini"
J_PROMPT_KEY = "j"
"""The key of mem0's J template in a suite's ``prompts:``."""
SKIPPED = "skipped: mem0's J does not score category 5 (adversarial)"


def shipped(name: str = "mem0-j") -> PromptTemplate:
    """A template shipped under ``memeval/benchmarks/locomo/prompts/`` (``mem0-j``).

    Raises:
        UsageError: no shipped prompt of that name.
    """
    return shipped_template(__package__ or "memeval.benchmarks.locomo", name)


def j_templates(files: Mapping[str, str]) -> dict[str, PromptTemplate]:
    """The J template: the suite's file under key ``j``, else the shipped one."""
    return {J_PROMPT_KEY: template_file(files[J_PROMPT_KEY]) if J_PROMPT_KEY in files else shipped()}


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


def _plan(p: ProbeResult, templates: Mapping[str, PromptTemplate], model: str) -> JudgeRequest | str:
    category = LOCOMO_IDS.get(p.category or "")
    if category is None:
        return f"not judged: {p.category!r} is not a LoCoMo category"
    if not j_applies(category):
        return SKIPPED
    gold = p.gold or (p.expect[0] if p.expect else None)
    if gold is None:
        return "not judged: no gold answer in the file"
    return j_request(templates[J_PROMPT_KEY], p.question, gold, p.llm_answer or "", model)


JUDGE = JudgeGrader(
    info=LOCOMO_J, measure="J", official_model=MEM0_JUDGE_MODEL, max_tokens=None, json_reply=True,
    template_keys=(J_PROMPT_KEY,), no_verdict="no verdict: the reply holds no JSON object with a label",
    skipped=SKIPPED, templates=j_templates, plan=_plan, verdict=j_verdict)
"""The ``mem0-j`` grader."""
