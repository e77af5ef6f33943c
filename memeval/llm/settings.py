"""Answerer and judge settings: the suite's ``llm:`` block, overridden by the environment.

Environment (an empty value counts as unset):

- ``EVAL_LLM_URL``: an OpenAI-compatible base URL (default ``https://openrouter.ai/api/v1``);
- ``EVAL_LLM_KEY``, falling back to ``OPENROUTER_API_KEY``: the API key. Keys come only from
  the environment, never from YAML, and go only to the endpoint the user chose: ``EVAL_LLM_URL``
  or the default URL. A URL the suite names (``llm.url``, ``llm.judge.url``) gets the key only
  when its host is listed in ``MEMEVAL_KEY_HOSTS`` (comma-separated host names); otherwise a
  loopback URL runs with a dummy key and any other is refused. A loopback URL (localhost,
  127.0.0.1, ::1) may run without a key (a dummy key is sent);
- ``EVAL_LLM_MODEL``: the model (default ``openai/gpt-4.1-mini``);
- ``EVAL_JUDGE_MODEL``: the model of a benchmark's judge grader (``longmemeval-judge``,
  ``mem0-j``), else ``llm.judge.model``, else the grader's official judge model
  (:mod:`memeval.llm.bench_judge`).

YAML keys (see ``$defs/llm`` in the suite schema): ``url``, ``model``, ``temperature`` (0),
``max_tokens`` (120), ``prompt`` (``answer-v1``; ``answer-dated-v1``, which adds the asking
time, for a suite whose probes carry one), ``judge`` (false, true or its own ``url``,
``model``, ``temperature``, ``max_tokens`` (10), ``prompt`` (``judge-v1``)), ``prices``
(``{model: {input_per_mtok, output_per_mtok}}`` in USD per million tokens), ``concurrency`` (4),
``timeout_s`` (60, per call), ``retries`` (3).

A prompt is a versioned template file: a bare name is a file shipped in
``memeval/llm/prompts/<name>.j2``; a value with a ``/`` or ending in ``.j2`` is a path relative
to the suite file. A template defines Jinja blocks ``system`` and ``user``; its sha256 covers the
file's bytes, so editing a prompt changes every cache key and is visible in run.json.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from memeval.errors import UsageError
from memeval.llm.cache import cache_folder
from memeval.report.served import is_mock
from memeval.util.suggest import did_you_mean

DEFAULT_URL = "https://openrouter.ai/api/v1"
DEFAULT_MODEL = "openai/gpt-4.1-mini"
ANSWER_DEFAULTS = {"prompt": "answer-v1", "temperature": 0.0, "max_tokens": 120}
DATED_PROMPT = "answer-dated-v1"
JUDGE_DEFAULTS = {"prompt": "judge-v1", "temperature": 0.0, "max_tokens": 10}
LOCAL_KEY = "memeval-local-no-key"
KEY_HOSTS_ENV = "MEMEVAL_KEY_HOSTS"
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
_PROMPTS = resources.files("memeval.llm").joinpath("prompts")
# A prompt template is data a suite names: it renders sandboxed and, having no loader, includes nothing.
_JINJA = ImmutableSandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False)


@dataclass(frozen=True)
class Price:
    """USD per million input (prompt) and output (completion) tokens."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """The USD cost of one call."""
        return (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1e6


@dataclass(frozen=True)
class Prompt:
    """A prompt template: its name, the sha256 of its file, and its Jinja source."""

    name: str
    sha256: str
    source: str

    @cached_property
    def _template(self) -> jinja2.Template:
        return _JINJA.from_string(self.source)  # compiled once, not for every call of a batch

    def render(self, variables: Mapping[str, str]) -> tuple[str, str]:
        """The (system, user) messages for ``variables``. Raises UsageError on a broken template."""
        try:
            template = self._template
            context = template.new_context(dict(variables))
            system, user = ("".join(template.blocks[b](context)).strip() for b in ("system", "user"))
        except KeyError as err:
            raise UsageError(f"prompt {self.name}: the template needs a {{% block {err.args[0]} %}}") from None
        except jinja2.TemplateError as err:
            raise UsageError(f"prompt {self.name}: {err}") from None
        return system, user

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "sha256": self.sha256}


@dataclass(frozen=True)
class ModelSettings:
    """One model behind one prompt (defaults: :func:`resolve`). ``key`` is never shown (not in
    repr, not in :meth:`to_json`)."""

    url: str
    model: str
    prompt: Prompt
    temperature: float
    max_tokens: int | None
    concurrency: int
    timeout_s: float
    retries: int
    prices: Mapping[str, Price]
    key: str = field(repr=False)
    json_reply: bool = False
    """Ask for a JSON object reply (``response_format`` ``json_object``), as mem0's judge does."""

    @property
    def endpoint(self) -> str:
        """The base URL without credentials, query or fragment: safe to record."""
        return public_url(self.url)

    def sampling(self) -> dict[str, Any]:
        """The sampling sent (``max_tokens`` None: not sent); ``json_reply`` only when asked for,
        so the cache keys of every other call stay as they were."""
        return {"temperature": self.temperature, "max_tokens": self.max_tokens,
                **({"json_reply": True} if self.json_reply else {})}

    def price(self, served: str | None = None) -> Price | None:
        """The price-table entry for this model, if the YAML gave one; never for a mock (the
        endpoint named the model that answered, ``served``, as a mock): a mock costs what it
        reports, else its cost is unknown."""
        if is_mock(served or self.model):
            return None
        return self.prices.get(self.model)

    def to_json(self) -> dict[str, Any]:
        """What run.json records about this model (no key)."""
        return {"endpoint": self.endpoint, "model": self.model, "prompt": self.prompt.to_json(),
                "sampling": self.sampling(), "concurrency": self.concurrency, "timeout_s": self.timeout_s,
                "retries": self.retries}


@dataclass(frozen=True)
class CacheSettings:
    """The answer cache: ``folder`` None means off; ``salt`` enters every key (e.g. a repeat id)."""

    folder: str | None
    salt: str = ""


@dataclass(frozen=True)
class LlmSettings:
    """Everything ``--llm`` and ``--judge`` need; ``judge`` is None when not judging.
    ``judge_model`` is the model named for a benchmark's judge grader (None: its official one);
    ``judge_repeats`` how many times every judge judges each answer (``--judge-repeats``)."""

    answer: ModelSettings
    judge: ModelSettings | None
    cache: CacheSettings
    judge_model: str | None = None
    judge_repeats: int = 1


def public_url(url: str) -> str:
    """``url`` without user info, query or fragment (and without a trailing slash)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}".rstrip("/")


def is_local(url: str) -> bool:
    """Whether ``url`` points at this machine (a key is then optional)."""
    return (urlsplit(url).hostname or "") in _LOCAL_HOSTS


def resolve(block: Mapping[str, Any], env: Mapping[str, str], *, base_dir: str = ".", judge: bool = False,
            cache: bool = True, salt: str = "", dated: bool = False, judge_repeats: int = 1) -> LlmSettings:
    """Settings from a validated ``llm:`` block and the environment; ``dated``: some probe has
    an asking time (the default prompt is then ``answer-dated-v1``).

    Raises:
        UsageError: a missing key for a non-local URL, a URL that is not http(s), an unknown or
            broken prompt template.
    """
    plain = {k: v for k, v in block.items() if not k.startswith("x-")}
    chosen = _env(env, "EVAL_LLM_URL")
    url = chosen or plain.get("url") or DEFAULT_URL
    key = _env(env, "EVAL_LLM_KEY") or _env(env, "OPENROUTER_API_KEY")
    trusted = {h.strip().lower() for h in (env.get(KEY_HOSTS_ENV) or "").split(",") if h.strip()}
    trusted |= {urlsplit(u).hostname or "" for u in (chosen or DEFAULT_URL,)}
    shared = {
        "key": key or "", "concurrency": int(plain.get("concurrency", 4)), "timeout_s": float(plain.get("timeout_s", 60)),
        "retries": int(plain.get("retries", 3)),
        "prices": {m: Price(float(p["input_per_mtok"]), float(p["output_per_mtok"])) for m, p in plain.get("prices", {}).items()},
    }
    model = _env(env, "EVAL_LLM_MODEL") or plain.get("model") or DEFAULT_MODEL
    defaults = {**ANSWER_DEFAULTS, "prompt": DATED_PROMPT} if dated else ANSWER_DEFAULTS
    answer = _model({**defaults, **plain, "url": url, "model": model}, _keyed(shared, url, trusted), base_dir)
    judged = plain.get("judge", False)
    judge_settings = None
    if judge or judged:
        overrides = judged if isinstance(judged, Mapping) else {}
        judged_url = str(overrides.get("url") or url)
        judge_settings = _model({**JUDGE_DEFAULTS, "url": url, "model": model, **overrides},
                                _keyed(shared, judged_url, trusted), base_dir)
    named = judged.get("model") if isinstance(judged, Mapping) else None
    return LlmSettings(answer, judge_settings, CacheSettings(cache_folder(env) if cache else None, salt),
                       judge_model=_env(env, "EVAL_JUDGE_MODEL") or (str(named) if named else None),
                       judge_repeats=judge_repeats)


def _keyed(shared: Mapping[str, Any], url: str, trusted: set[str]) -> dict[str, Any]:
    """``shared`` with the key only when ``url``'s host is one the user chose (see the module
    docstring); a suite cannot send the user's key to a host of its own choosing.

    Raises:
        UsageError: a key is set, the host is not trusted, and the URL is not local.
    """
    host = (urlsplit(url).hostname or "").lower()
    if not shared["key"] or host in trusted:
        return dict(shared)
    if not is_local(url):
        raise UsageError(f"--llm: the suite names the endpoint {public_url(url)}; the API key from the environment "
                         f"goes only to EVAL_LLM_URL or a host listed in {KEY_HOSTS_ENV} (e.g. {KEY_HOSTS_ENV}={host})")
    return {**shared, "key": ""}


def _env(env: Mapping[str, str], name: str) -> str | None:
    return env.get(name) or None


def _model(values: Mapping[str, Any], shared: Mapping[str, Any], base_dir: str) -> ModelSettings:
    url = str(values["url"])
    if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
        raise UsageError(f"llm url {public_url(url)!r}: expected an http(s) URL such as {DEFAULT_URL}")
    settings = ModelSettings(url=url, model=str(values["model"]), prompt=load_prompt(str(values["prompt"]), base_dir),
                             temperature=float(values["temperature"]), max_tokens=int(values["max_tokens"]), **shared)
    if not settings.key:
        if not is_local(url):
            raise UsageError(f"--llm: no API key for {settings.endpoint}: set EVAL_LLM_KEY (or OPENROUTER_API_KEY), "
                             "or point EVAL_LLM_URL at a local server")
        settings = replace(settings, key=LOCAL_KEY)
    settings.prompt.render({"pack": "", "question": "", "asked_at": "", "reference": "", "alternatives": "",
                            "stale": "", "candidate": ""})
    return settings


def prompt_names() -> list[str]:
    """The prompt templates shipped with memeval."""
    return sorted(p.name.removesuffix(".j2") for p in _PROMPTS.iterdir() if p.name.endswith(".j2"))


def load_prompt(name: str, base_dir: str = ".") -> Prompt:
    """A packaged prompt by name, or a template file (``/`` in the value, or ``.j2``) relative to
    ``base_dir``. Raises UsageError when it does not exist."""
    if "/" in name or name.endswith(".j2"):
        path = os.path.join(base_dir, name)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as err:
            raise UsageError(f"llm prompt {name!r}: cannot read {path}: {err.strerror or err}") from None
        label = os.path.basename(name).removesuffix(".j2")
    else:
        resource = _PROMPTS.joinpath(f"{name}.j2")
        if not resource.is_file():
            known = prompt_names()
            raise UsageError(f"llm prompt {name!r} is not shipped{did_you_mean(name, known)}; shipped: {', '.join(known)}")
        data, label = resource.read_bytes(), name
    return Prompt(label, hashlib.sha256(data).hexdigest(), data.decode("utf-8"))
