"""OpenAI-compatible chat calls: bounded retries, cost, caching and bounded concurrency.

:class:`ModelClient` makes one call with the ``openai`` package (its own retries off; imported
by the first client, since importing it takes about a second):

- 429 and 5xx, connection errors and timeouts are retried up to ``retries`` times, waiting
  ``Retry-After`` when the server sends one (at most 60 s), else 0.5 s, 1 s, 2 s, … (at most 8 s);
- 401, 402 and 403 raise :class:`memeval.errors.AnswererStopped`: retrying cannot help;
- any other status, or retries used up, raises :class:`CallFailed` for that call alone.

Cost per call: the USD the endpoint reports (``usage.cost``, as OpenRouter and the mock do),
else the YAML price table, else None (never 0). Error text never holds the API key.

:class:`Batch` runs many calls of one model and prompt through the reply cache and a thread
pool, keeping results in input order; after a refusal it asks nothing more.
"""

from __future__ import annotations

import email.utils
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from memeval.errors import AnswererStopped
from memeval.util.interruptible import gather
from memeval.llm.cache import ReplyCache, cache_key
from memeval.secrets import mask, remember
from memeval.llm.settings import CacheSettings, ModelSettings

if TYPE_CHECKING:
    import openai

BACKOFF_S, BACKOFF_CAP_S, RETRY_AFTER_CAP_S = 0.5, 8.0, 60.0
REFUSED = (401, 402, 403)


class CallFailed(Exception):
    """One call failed for good; ``str(err)`` is one line without the key."""


@dataclass(frozen=True)
class Reply:
    """A model's reply text, its tokens (None when the endpoint reports no usage) and USD cost."""

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    cached: bool = False
    served: str | None = None
    """The model name the endpoint gave in its answer, kept in the cache with it (None: not given,
    or cached before names were kept)."""

    @property
    def total_tokens(self) -> int | None:
        if self.prompt_tokens is None or self.completion_tokens is None:
            return None
        return self.prompt_tokens + self.completion_tokens

    def to_entry(self) -> dict[str, Any]:
        """The cache entry for this reply (known secrets masked: an endpoint may echo a key)."""
        return {"text": mask(self.text), "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "cost_usd": self.cost_usd, "served": self.served}

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any]) -> Reply:
        """A cached reply (``cached`` true) from its entry."""
        served = entry.get("served")
        return cls(entry["text"], entry.get("prompt_tokens"), entry.get("completion_tokens"), entry.get("cost_usd"), True,
                   served if isinstance(served, str) else None)


def spent(replies: Sequence[Reply], *, none_cost_nothing: bool = False) -> dict[str, Any]:
    """``prompt_tokens``, ``completion_tokens``, ``tokens`` and ``cost_usd`` summed over
    ``replies``, each null when any reply's is unknown. No replies sum to null (nothing was
    measured), or to 0 with ``none_cost_nothing`` (the calls this run did not make)."""
    tokens, usd = (0, 0.0) if none_cost_nothing else (None, None)
    return {"prompt_tokens": _total([r.prompt_tokens for r in replies], tokens),
            "completion_tokens": _total([r.completion_tokens for r in replies], tokens),
            "tokens": _total([r.total_tokens for r in replies], tokens),
            "cost_usd": _total([r.cost_usd for r in replies], usd)}


def _served(replies: Sequence[Reply]) -> dict[str, Any]:
    """``served``: the model names the replies gave, when any did (the key is left out otherwise)."""
    names = sorted({r.served for r in replies if r.served})
    return {"served": names} if names else {}


def _total(values: Sequence[float | int | None], empty: float | None) -> float | int | None:
    """The sum, or None when any value is unknown; ``empty`` for no values."""
    if not values:
        return empty
    if any(v is None for v in values):
        return None
    summed = sum(v for v in values if v is not None)
    return round(summed, 10) if isinstance(summed, float) else summed


class ModelClient:
    """Single chat calls to one model; counts HTTP requests and retries (thread-safe)."""

    def __init__(self, settings: ModelSettings):
        import openai  # takes about 1 s: imported when a model is called, not when the module is

        self.settings = settings
        remember([settings.key])  # masked wherever it would appear (an endpoint may echo it)
        self._lock = threading.Lock()
        self.requests = 0
        self.retries = 0
        self._openai = openai.OpenAI(base_url=settings.url, api_key=settings.key, max_retries=0,
                                     timeout=settings.timeout_s)
        # OpenRouter reports the USD cost of a call only when asked to
        openrouter = (urlsplit(settings.url).hostname or "").endswith("openrouter.ai")
        self._extra = {"usage": {"include": True}} if openrouter else None

    def close(self) -> None:
        self._openai.close()

    def complete(self, system: str, user: str) -> Reply:
        """One answer, retried as the module docstring says.

        Raises:
            AnswererStopped: the endpoint refused (401, 402, 403).
            CallFailed: any other failure, after retries where retrying can help.
        """
        import openai  # already loaded by __init__

        attempt = 0
        while True:
            try:
                return self._once(system, user)
            except openai.APIStatusError as err:
                failure, wait = self._status_failure(err)
            except openai.APIConnectionError as err:
                what = "timed out waiting for" if isinstance(err, openai.APITimeoutError) else "cannot connect to"
                failure, wait = mask(f"{what} {self.settings.endpoint}"), None
            if attempt >= self.settings.retries:
                raise CallFailed(f"{failure} (after {attempt + 1} attempts)")
            with self._lock:
                self.retries += 1
            time.sleep(wait if wait is not None else min(BACKOFF_CAP_S, BACKOFF_S * 2 ** attempt))
            attempt += 1

    def _once(self, system: str, user: str) -> Reply:
        with self._lock:
            self.requests += 1
        s = self.settings
        # an empty system prompt is left out, as the benchmarks' judges send the user message alone
        messages: list[Any] = ([{"role": "system", "content": system}] if system else []) + \
            [{"role": "user", "content": user}]
        optional: dict[str, Any] = {} if s.max_tokens is None else {"max_tokens": s.max_tokens}
        if s.json_reply:
            optional["response_format"] = {"type": "json_object"}
        completion = self._openai.chat.completions.create(model=s.model, messages=messages, temperature=s.temperature,
                                                          extra_body=self._extra, **optional)
        text = (completion.choices[0].message.content or "").strip() if completion.choices else ""
        usage = completion.usage
        prompt = usage.prompt_tokens if usage else None
        done = usage.completion_tokens if usage else None
        served = completion.model or None
        return Reply(text, prompt, done, self._cost(getattr(usage, "cost", None), prompt, done, served), served=served)

    def _cost(self, reported: Any, prompt: int | None, completion: int | None, served: str | None) -> float | None:
        if isinstance(reported, int | float) and not isinstance(reported, bool):
            return float(reported)
        price = self.settings.price(served)
        if price is None or prompt is None or completion is None:
            return None
        return price.cost(prompt, completion)

    def _status_failure(self, err: openai.APIStatusError) -> tuple[str, float | None]:
        code = err.status_code
        body = err.body if isinstance(err.body, dict) else {}
        detail = str(body.get("message") or err.response.reason_phrase or "no detail")[:200]
        line = mask(f"HTTP {code} from {self.settings.endpoint}: {detail}")
        if code in REFUSED:
            raise AnswererStopped(line) from None
        if code == 429 or code >= 500:
            return line, retry_after(err.response.headers.get("retry-after"))
        raise CallFailed(line) from None


def retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date), at most 60."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if email.utils.parsedate_tz(value) else None
        if parsed is None:
            return None
        seconds = parsed.timestamp() - time.time()
    return min(RETRY_AFTER_CAP_S, max(0.0, seconds))


class Batch:
    """Many calls of one model with one prompt: cached, retried, ``concurrency`` at a time."""

    def __init__(self, settings: ModelSettings, cache: CacheSettings):
        self.settings = settings
        self.client = ModelClient(settings)
        self._cache = ReplyCache(cache.folder) if cache.folder else None
        self._salt = cache.salt
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.stopped: str | None = None
        self.hits = self.misses = self.reused = 0
        self.fresh: list[Reply] = []
        self.answers: list[Reply] = []
        """Every reply this batch handed out, fresh or from the cache: who served them."""

    def run(self, jobs: Sequence[Mapping[str, str]], salt: str | None = None) -> list[Reply | str | None]:
        """For each job (template variables), in order: the Reply, the one-line reason its call
        failed, or None when it was not asked because the endpoint refused (see :attr:`stopped`).
        ``salt`` replaces the cache salt for these jobs (a judging repeat's own).

        With the cache on, identical jobs are asked once: the later ones are *reused* in-run
        (marked cached, counted in :attr:`reused`, never in :attr:`hits`), so :attr:`hits`
        counts only replies a disk entry written by an earlier run (or repeat) served."""
        s = self.settings
        salted = self._salt if salt is None else salt
        keys = [cache_key(s.endpoint, s.model, s.prompt.sha256, v, s.sampling(), salted) for v in jobs]
        first: dict[str, int] = {}
        for i, key in enumerate(keys):
            first.setdefault(key, i)
        asked = list(first.values()) if self._cache else list(range(len(jobs)))
        with ThreadPoolExecutor(max_workers=s.concurrency) as pool:
            answers = dict(zip(asked, gather(pool, lambda i: self._one(jobs[i], keys[i]), asked), strict=True))
        out: list[Reply | str | None] = []
        for i, key in enumerate(keys):
            if i in answers:
                out.append(answers[i])
                continue
            reused = answers[first[key]]
            self.reused += isinstance(reused, Reply)
            out.append(replace(reused, cached=True) if isinstance(reused, Reply) else reused)
        return out

    def _one(self, variables: Mapping[str, str], key: str) -> Reply | str | None:
        if self._stop.is_set():
            return None
        entry = self._cache.get(key) if self._cache else None
        with self._lock:
            if self._cache:
                self.hits, self.misses = self.hits + (entry is not None), self.misses + (entry is None)
        if entry is not None:
            cached = Reply.from_entry(entry)
            with self._lock:
                self.answers.append(cached)
            return cached
        try:
            reply = self.client.complete(*self.settings.prompt.render(variables))
        except AnswererStopped as err:
            with self._lock:
                self.stopped = self.stopped or str(err)
            self._stop.set()
            return None
        except CallFailed as err:
            return str(err)
        with self._lock:
            self.fresh.append(reply)
            self.answers.append(reply)
        if self._cache:
            self._cache.put(key, reply.to_entry())
        return reply

    def summary(self) -> dict[str, Any]:
        """What run.json records: the settings, the cache, and what this run's calls incurred."""
        return {
            **self.settings.to_json(),
            "cache": {"enabled": self._cache is not None, "salt": self._salt or None, "hits": self.hits,
                      "misses": self.misses, "reused": self.reused},
            "incurred": {"calls": len(self.fresh), "requests": self.client.requests, "retries": self.client.retries,
                         **spent(self.fresh, none_cost_nothing=True),
                         **_served(self.answers)},
        }

    def close(self) -> None:
        self.client.close()
