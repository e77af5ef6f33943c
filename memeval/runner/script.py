"""The scripted agent: plays a thread one exchange at a time through the lifecycle.

Reply policy (declared in the suite, ``agent.reply``):

* ``neutral`` (default): one ``<tool> returned: <result>`` line per carried tool call, then
  "Noted." — a recalled line is never written back as if it were new.
* ``echo_memory``: the original's reply: tool lines, then for a question "Going by memory:
  <extractive line>" or "I don't have that in memory.", else "Noted." with no tools. This can
  make a stale value look fresh; choose it only to reproduce the original.

An explicit ``reply`` in the YAML is stored as written (tool results survive only if it says them).
"""

from __future__ import annotations

from memeval.agent.lifecycle import AgentMemory
from memeval.engines.base import ToolCallRef, WriteReceipt
from memeval.agent.pack import Pack
from memeval.score.extractive import NO_MEMORY, extract_answer
from memeval.spec.model import Exchange, Thread


def scripted_reply(exchange: Exchange, pack: Pack, policy: str) -> str:
    """The reply the scripted agent stores for one exchange."""
    if exchange.reply is not None:
        return exchange.reply
    lines = [f"{t.name} returned: {t.result}" for t in exchange.tools if t.carried]
    if policy == "echo_memory" and exchange.user.rstrip().endswith("?"):
        found = extract_answer(pack.markdown, exchange.user)
        lines.append(f"Going by memory: {found}" if found else NO_MEMORY)
    elif not lines:
        lines.append("Noted.")
    return "\n".join(lines)


def play_exchange(memory: AgentMemory, thread: Thread, index: int, at_user: str, at_reply: str,
                  window: int, reply_policy: str) -> tuple[str | None, WriteReceipt, str]:
    """Run exchange ``index`` of ``thread``: pre_turn (log + recall), reply, post_turn (log).

    Returns the id of the logged user turn, the receipt of the reply and the reply's text.
    """
    exchange = thread.exchanges[index]
    turn = 2 * index
    ctx = memory.pre_turn(thread.id, turn, exchange.user, max(0, turn - window), at_user)
    calls = tuple(ToolCallRef(t.name, f"{thread.id}-{index}-{k}") for k, t in enumerate(exchange.tools))
    reply = scripted_reply(exchange, ctx.pack, reply_policy)
    receipt = memory.post_turn(thread.id, turn + 1, reply, calls, at_reply)
    return ctx.logged, receipt, reply
