"""Who produced the answers: the model the endpoint named in its replies, beside the one asked for.

A reply's model name is recorded with the answer when it is first produced (and kept in the
answer cache), so answers served from the cache still say who produced them. A mock inference
server names itself (``mock-chat``): then the words say "the mock model", with the model that
was asked for beside it.
"""

from __future__ import annotations

from memeval.record import ModelSide

MOCK_PREFIX = "mock-"
"""How a mock model names itself (the project's mock inference server serves ``mock-chat`` and
``mock-embed`` whatever name was asked for)."""


def is_mock(model: str) -> bool:
    """Whether a model name is a mock's (see :data:`MOCK_PREFIX`)."""
    return model.startswith(MOCK_PREFIX)


def answered_by(side: ModelSide) -> str:
    """Who answered, as the endpoint named it: a mock says "mock" (with the model asked for), a
    model served under another name than the one asked for shows both, and answers whose producer
    was never recorded say so (with no answer at all, the model asked for alone)."""
    served = side.incurred.served or ()
    names = ", ".join(served)
    if any(is_mock(name) for name in (*served, side.model)):
        return f"the mock model {names or side.model}" + (f" (asked for {side.model})" if names and
                                                           side.model not in served else "")
    if not served:
        answered = side.incurred.calls or side.cache.hits or side.cache.reused
        return f"{side.model} (asked for; the endpoint did not name the model that served)" if answered else side.model
    return side.model if served == (side.model,) else f"{side.model} (served as {names})"
