"""The conformance kit: a fixed battery of contracts every engine adapter must keep.

:func:`run_checks` runs every :data:`CONTRACTS` entry against one engine, each in fresh tenants
(``conformance-<random>-<n>``) that it clears afterwards, and returns one :class:`Result` per
contract, in order. ``memeval check-engine`` prints them; :mod:`memeval.engines.pytest_plugin`
turns them into one test per contract.

A contract fails with a one-line reason: what it saw that the contract forbids, an
:class:`~memeval.errors.EngineError` the engine raised (``engine error: <reason>``), or any
other exception escaping the adapter (``raised <Type> instead of an EngineError``). A contract
about a capability the engine does not implement is skipped. Writes are awaited by listing
("settle", ``settle_s``, default 30 s) before they are looked for in recall.

:func:`reach` is asked first: an engine that cannot answer ``info`` and one listing is
unreachable (:class:`Unreachable`, exit 3), and no contract is run.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from memeval.engines.base import (Answers, BuildReceipt, BuildsBeliefs, Capability, Derived, Engine, Erases,
                                  HasBacklog, Inspects, MemoryItem, RecallRequest, ReportsConflicts, ReportsUsage,
                                  Usage, capabilities_of, missing_core)
from memeval.errors import EngineError

DEFAULT_SETTLE_S = 30.0
FIRST_POLL_S, MAX_POLL_S = 0.02, 1.0
MAX_PAGES = 1000
WORD = "zircon"  # in every item the recall contracts look for, and in none of the filler


class Broken(Exception):
    """A contract was broken; the message is the one-line reason."""


class Unreachable(EngineError):
    """The engine does not answer at all (exit 3): no contract can be checked."""


@dataclass(frozen=True)
class Result:
    """One contract's outcome. ``reason`` is empty on a pass."""

    contract: str
    status: Literal["pass", "fail", "skip"]
    reason: str = ""

    @property
    def ok(self) -> bool:
        """False only for a failed contract (a skip is not a failure)."""
        return self.status != "fail"

    def line(self) -> str:
        """``PASS  name``, ``FAIL  name: reason`` or ``SKIP  name: reason``."""
        return f"{self.status.upper():<5} {self.contract}" + (f": {self.reason}" if self.reason else "")


class Bench:
    """What a contract works with: the engine, fresh tenants, and the settle wait."""

    def __init__(self, engine: Engine, settle_s: float) -> None:
        self.engine, self.settle_s = engine, settle_s
        self._run = uuid.uuid4().hex[:8]
        self.tenants: list[str] = []

    def tenant(self) -> str:
        """A tenant no other contract (or run of the kit) uses."""
        name = f"conformance-{self._run}-{len(self.tenants)}"
        self.tenants.append(name)
        return name

    def write(self, *items: MemoryItem) -> None:
        """Write ``items`` and wait until every one is listed in its tenant."""
        for item in items:
            receipt = self.engine.write(item)
            if receipt.id != item.id:
                raise Broken(f"write of {item.id} returned the receipt id {receipt.id!r}")
        for tenant in dict.fromkeys(i.tenant for i in items):
            self.settle(tenant, {i.id for i in items if i.tenant == tenant})

    def settle(self, tenant: str, ids: set[str]) -> None:
        """Wait until ``ids`` are all listed in ``tenant``; Broken after ``settle_s``."""
        deadline, pause = time.monotonic() + self.settle_s, FIRST_POLL_S
        while True:
            missing = ids - {i.id for i in listing(self.engine, tenant)}
            if not missing:
                return
            if time.monotonic() + pause > deadline:
                raise Broken(f"{len(ids) - len(missing)} of {len(ids)} writes listed after {self.settle_s:g} s")
            time.sleep(pause)
            pause = min(2 * pause, MAX_POLL_S)

    def recall(self, tenant: str, nodes: tuple[str, ...], query: str | None, limit: int = 10) -> list[MemoryItem]:
        """The items of a recall, checked against its limit and nodes."""
        hits = self.engine.recall(RecallRequest(tenant, nodes, query, limit))
        if len(hits) > limit:
            raise Broken(f"recall with limit {limit} returned {len(hits)} hits")
        return [h.item for h in hits]

    def clear(self) -> None:
        """Remove what the contracts wrote (best effort: a broken engine may keep it)."""
        for tenant in self.tenants:
            try:
                if isinstance(self.engine, Erases):
                    self.engine.erase(tenant)
                else:
                    ids = tuple(i.id for i in listing(self.engine, tenant))
                    if ids:
                        self.engine.forget(tenant, ids)
            except (EngineError, Broken):
                continue


def item(tenant: str, text: str, node: str = "agent:a", minute: int = 0) -> MemoryItem:
    """A dated user turn in ``node``, ``minute`` minutes after 09:00 on 2026-09-01."""
    agent = node.split(":", 1)[1] if node.startswith("agent:") else None
    kind = "turn" if agent else "learning" if node == "learnings" else "document"
    at = f"2026-09-01T{9 + minute // 60:02d}:{minute % 60:02d}:00Z"
    return MemoryItem(tenant, node, kind, text, thread="t" if agent else None, turn=minute if agent else None,
                      agent=agent, at=at)


def listing(engine: Engine, tenant: str, limit: int = 100) -> Iterator[MemoryItem]:
    """Every item listed in ``tenant``, following the cursors; Broken when a cursor repeats or
    a page holds more than ``limit`` items."""
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        page = engine.page(tenant, cursor, limit)
        if len(page.items) > limit:
            raise Broken(f"a page with limit {limit} held {len(page.items)} items")
        yield from page.items
        if page.cursor is None:
            return
        if page.cursor in seen:
            raise Broken(f"the listing handed out the cursor {page.cursor!r} twice")
        seen.add(page.cursor)
        cursor = page.cursor
    raise Broken(f"the listing did not end after {MAX_PAGES} pages")


def _ids(items: Iterator[MemoryItem] | list[MemoryItem]) -> list[str]:
    return [i.id for i in items]


def check_write_visible(bench: Bench) -> None:
    tenant = bench.tenant()
    written = item(tenant, f"The {WORD} badge opens the north door.")
    bench.write(written)
    if written.id not in _ids(bench.recall(tenant, ("agent:a",), WORD)):
        raise Broken("a listed write is not recalled by a word it contains")
    stored = next(i for i in listing(bench.engine, tenant) if i.id == written.id)
    if stored != written:
        raise Broken(f"the listed item differs from the written one: {stored!r:.120}")


def check_replay(bench: Bench) -> None:
    tenant = bench.tenant()
    written = item(tenant, f"The {WORD} invoice was paid on Monday.")
    bench.write(written)
    bench.write(written)
    count = _ids(listing(bench.engine, tenant)).count(written.id)
    if count != 1:
        raise Broken(f"an item written twice is listed {count} times")
    recalled = len(bench.recall(tenant, ("agent:",), WORD))
    if recalled != 1:
        raise Broken(f"an item written twice is recalled {recalled} times by a word it contains (want once)")


def check_tenants(bench: Bench) -> None:
    mine, theirs = bench.tenant(), bench.tenant()
    bench.write(item(mine, f"Our {WORD} vault code is 1234."), item(theirs, f"Their {WORD} vault code is 9876."))
    for tenant, other in ((mine, theirs), (theirs, mine)):
        seen = list(listing(bench.engine, tenant)) + bench.recall(tenant, ("agent:",), WORD) + \
            bench.recall(tenant, ("agent:",), None)
        if any(i.tenant != tenant for i in seen) or len({i.id for i in seen}) != 1:
            raise Broken(f"tenant {tenant} sees items of {other}")


def check_limit(bench: Bench) -> None:
    tenant = bench.tenant()
    bench.write(*(item(tenant, f"Note {n}: the {WORD} shipment {n} arrived.", minute=n) for n in range(6)))
    for limit in (1, 3):
        for query in (WORD, None):
            got = bench.recall(tenant, ("agent:",), query, limit)
            if len(got) != limit:
                raise Broken(f"recall (query {query!r}) with limit {limit} of 6 matches returned {len(got)}")


def check_node_filters(bench: Bench) -> None:
    tenant = bench.tenant()
    placed = {node: item(tenant, f"The {WORD} note kept in {node}.", node, n)
              for n, node in enumerate(("agent:a", "agent:b", "learnings", "source:wiki"))}
    bench.write(*placed.values())
    wanted = {("agent:a",): {"agent:a"}, ("agent:",): {"agent:a", "agent:b"}, ("learnings",): {"learnings"},
              ("source:",): {"source:wiki"}, ("agent:b", "learnings"): {"agent:b", "learnings"}}
    for nodes, expected in wanted.items():
        for query in (WORD, None):
            got = {i.node for i in bench.recall(tenant, nodes, query)}
            if got != expected:
                raise Broken(f"recall over {list(nodes)} (query {query!r}) found {sorted(got)}, not {sorted(expected)}")


def check_forget(bench: Bench) -> None:
    tenant = bench.tenant()
    gone, kept = item(tenant, f"The old {WORD} address is 12 Harbour Street."), \
        item(tenant, f"The new {WORD} address is 40 Canal Road.", minute=1)
    bench.write(gone, kept)
    removed = bench.engine.forget(tenant, (gone.id,))
    if removed < 1:
        raise Broken(f"forget of a stored item reported {removed} removed")
    if gone.id in _ids(listing(bench.engine, tenant)):
        raise Broken("a forgotten item is still listed")
    recalled = _ids(bench.recall(tenant, ("agent:",), WORD)) + _ids(bench.recall(tenant, ("agent:",), None))
    if gone.id in recalled:
        raise Broken("a forgotten item is still recalled")
    if kept.id not in recalled:
        raise Broken("forgetting one item lost another")


def check_erase(bench: Bench) -> None:
    engine = bench.engine
    assert isinstance(engine, Erases)  # run only for engines that implement it
    tenant, other = bench.tenant(), bench.tenant()
    bench.write(item(tenant, f"The {WORD} lease ends in May."), item(other, f"The {WORD} lease ends in June."))
    engine.erase(tenant)
    if list(listing(engine, tenant)) or bench.recall(tenant, ("agent:",), WORD) or bench.recall(tenant, ("agent:",), None):
        raise Broken("an erased tenant still lists or recalls items")
    if not list(listing(engine, other)):
        raise Broken("erasing one tenant emptied another")


def check_paging(bench: Bench) -> None:
    tenant = bench.tenant()
    items = [item(tenant, f"Filler line number {n}.", minute=n) for n in range(7)]
    bench.write(*items)
    listed = _ids(listing(bench.engine, tenant, limit=3))
    if sorted(listed) != sorted(i.id for i in items):
        twice = sorted({i for i in listed if listed.count(i) > 1})
        raise Broken(f"paging by 3 listed {len(listed)} items for 7 written" + (f" ({len(twice)} twice)" if twice else ""))


def check_declared(bench: Bench) -> None:
    engine = bench.engine
    declared, implemented = frozenset(engine.info().capabilities), capabilities_of(engine)
    if declared != implemented:
        extra, lacking = sorted(map(str, declared - implemented)), sorted(map(str, implemented - declared))
        raise Broken(f"info declares {extra or 'nothing'} it does not implement, omits {lacking or 'nothing'} it does")
    tenant = bench.tenant()
    bench.write(item(tenant, f"The {WORD} meeting moved to Thursday."))
    if isinstance(engine, Answers):
        _returns(engine.answer(tenant, f"When is the {WORD} meeting?", ("agent:",), 3), str, "answer")
    if isinstance(engine, BuildsBeliefs):
        _returns(engine.build_beliefs(tenant), BuildReceipt, "build_beliefs")
    if isinstance(engine, Inspects):
        _returns(engine.inspect(tenant), Derived, "inspect")
    if isinstance(engine, ReportsConflicts):
        _returns(engine.conflicts(tenant), tuple, "conflicts")
    if isinstance(engine, ReportsUsage):
        _returns(engine.usage(), Usage, "usage")
    if isinstance(engine, HasBacklog):
        pending = engine.backlog()
        _returns(pending, int, "backlog")
        if pending < 0:
            raise Broken(f"backlog returned {pending}")


def _returns(value: object, expected: type, method: str) -> None:
    if not isinstance(value, expected) or isinstance(value, bool):
        raise Broken(f"{method} returned a {type(value).__name__}, not a {expected.__name__}")


def check_errors(bench: Bench) -> None:
    tenant = bench.tenant()
    try:
        page = bench.engine.page(tenant, "no-such-cursor-\u2603", 10)
    except EngineError as err:
        if not str(err).strip() or "\n" in str(err):
            raise Broken(f"the engine error is not one line: {str(err)!r:.120}") from None
        return
    raise Broken(f"a cursor the engine never handed out gave a page of {len(page.items)}, not an EngineError")


@dataclass(frozen=True)
class Contract:
    """A named contract: its check, and the capability it needs (None: the core)."""

    name: str
    check: Callable[[Bench], None]
    needs: Capability | None = None


CONTRACTS = (
    Contract("write visible after settle", check_write_visible),
    Contract("replayed write stores nothing", check_replay),
    Contract("tenants never see each other", check_tenants),
    Contract("recall honours limit", check_limit),
    Contract("recall honours node filters", check_node_filters),
    Contract("forget removes from recall and listing", check_forget),
    Contract("erase empties a tenant", check_erase, Capability.ERASE),
    Contract("paging returns each item once", check_paging),
    Contract("declared capabilities work, undeclared refused", check_declared),
    Contract("failures are engine errors", check_errors),
)
"""The battery, in the order it runs."""


def reach(engine: Engine) -> None:
    """Raises Unreachable when the engine lacks a core method or cannot answer ``info`` and one
    listing of an empty tenant."""
    missing = missing_core(engine)
    if missing:
        raise Unreachable(f"{type(engine).__name__} is not an Engine: no {', '.join(missing)}")
    try:
        engine.info()
        engine.page(f"conformance-{uuid.uuid4().hex[:8]}-reach", None, 1)
    except EngineError as err:
        raise Unreachable(f"engine unreachable: {err}") from None


def check(engine: Engine, contract: Contract, settle_s: float = DEFAULT_SETTLE_S) -> Result:
    """One contract against ``engine`` (which must have passed :func:`reach`)."""
    if contract.needs is not None and contract.needs not in capabilities_of(engine):
        return Result(contract.name, "skip", f"no {contract.needs} capability")
    bench = Bench(engine, settle_s)
    try:
        contract.check(bench)
        return Result(contract.name, "pass")
    except Broken as err:
        return Result(contract.name, "fail", str(err))
    except EngineError as err:
        return Result(contract.name, "fail", f"engine error: {err}")
    except Exception as err:  # the kit's point: an adapter bug is a named failure, not a crash
        return Result(contract.name, "fail", f"raised {type(err).__name__} instead of an EngineError: {err}")
    finally:
        bench.clear()


def run_checks(engine: Engine, settle_s: float = DEFAULT_SETTLE_S,
               on_result: Callable[[Result], None] = lambda _: None) -> list[Result]:
    """Every contract against ``engine``, in order, each result also passed to ``on_result`` as
    it comes. Raises Unreachable (see :func:`reach`)."""
    reach(engine)
    results = []
    for contract in CONTRACTS:
        results.append(check(engine, contract, settle_s))
        on_result(results[-1])
    return results
