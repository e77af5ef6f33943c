"""Model answers and an LLM judge over run records (``--llm``, ``--judge``, ``memeval regrade``).

- :mod:`memeval.llm.settings`: the suite's ``llm:`` block plus environment overrides, resolved
  into frozen settings; prompt template files (versioned, hashed).
- :mod:`memeval.llm.client`: OpenAI-compatible chat calls with bounded retries, cost, and a
  cached, bounded-concurrency batch of calls that stops cleanly when the endpoint refuses.
- :mod:`memeval.llm.cache`: the on-disk answer cache.
- :mod:`memeval.llm.answer`: answer every scored probe of a record.
- :mod:`memeval.llm.judge`: an LLM grades the model answers, after a leniency check.
- :mod:`memeval.llm.regrade`: ``memeval regrade``, grading (or answering) a recorded run again.

The API key lives only in :class:`memeval.llm.settings.ModelSettings` (never printed) and in the
HTTP client; it never reaches run.json, reports, logs or exception text.
"""
