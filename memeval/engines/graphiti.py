"""Graphiti (``graphiti-core``, a temporal knowledge graph) as a memeval engine, in-process.

Install with ``pip install 'memeval-harness[graphiti]'``. The graph is Graphiti's embedded Kuzu
driver (deprecated upstream, but the only one that needs no server) on disk under the engine's
data folder; its LLM (``OpenAIGenericClient``, structured output by ``json_schema``), embedder
and reranker point at any OpenAI-compatible endpoint: real models, or memeval's mock inference
server, whose schema-shaped answers take capitalised words as entities and the sentence as the
fact (wiring, not intelligence). Telemetry is off (``GRAPHITI_TELEMETRY_ENABLED`` is set to
false unless the caller set it), so nothing is written to the home directory.

Mapping: a tenant is one Graphiti ``group_id`` (``t`` + a hash of the tenant: group ids allow
only ASCII letters, digits, ``-`` and ``_``); a write is one ``add_episode`` of the item's text,
dated by ``item.at`` (undated items by the write time), from which Graphiti extracts entities
and fact edges. Recall is ``search`` (hybrid BM25 + cosine over fact edges, RRF) with
``num_results`` = the request's limit; each edge is mapped back to the items whose episodes it
came from, in rank order, scored ``1 / rank``, and filtered to the requested nodes (Graphiti
knows no nodes). Several edges can come from one item, so while fewer than ``limit`` items were
found and edges were cut off, the search is repeated for twice as many edges (up to
``EDGE_FANOUT`` times the limit): a recall returns at most ``limit`` items. An item from which
Graphiti extracted no edge is never recalled by a query. ``query=None`` lists the accepted
items newest first.

Listing, the replay check and the map from episode to item live in this process (as for
mem0): ``page`` lists the items this engine accepted. ``forget`` is ``remove_episode`` (which
drops the edges and entities only that episode supported), ``erase`` clears the group.
``inspect`` gives the fact edges Graphiti holds: Graphiti's own derived layer.

Three Graphiti 0.31 defects are worked around: ``Graphiti.build_indices_and_constraints`` is a
no-op on Kuzu (the full-text indexes ``search`` needs are built through the driver's
``graph_ops``); ``KuzuDriver`` never sets the ``_database`` that ``add_episode`` reads (an
AttributeError); and the Kuzu full-text search passes the query on as it is, where a word with
punctuation attached (``move?``) was seen to make the whole BM25 query match nothing, so recall
searches for the query's words only (Graphiti's Neo4j path sanitises queries too).

Settings: ``url`` (else ``$GRAPHITI_OPENAI_URL``), ``llm_model``, ``embed_model``,
``embed_dims`` (default 256), ``api_key_env`` (the NAME of the variable holding the key; without
it a placeholder key is sent, fine for the mock) and ``data_dir`` (default: a temporary folder
this engine owns and removes on close).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.metadata
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Awaitable, Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar

from memeval.engines.base import (Adapter, Belief, Derived, EngineInfo, Hit, MemoryItem, RecallRequest,
                                  WriteReceipt, capabilities_of, node_matches)
from memeval.engines.listing import AcceptedListing, ItemLog, recency_key
from memeval.errors import EngineError, UsageError
from memeval.util.suggest import did_you_mean

URL_ENV = "GRAPHITI_OPENAI_URL"
PLACEHOLDER_KEY = "memeval-no-key"
EDGE_FANOUT = 16
_WORD = re.compile(r"\w+")
_SETTINGS = ("url", "llm_model", "embed_model", "embed_dims", "api_key_env", "data_dir")
_DEFAULTS: dict[str, Any] = {"llm_model": "mock-chat", "embed_model": "mock-embed", "embed_dims": 256}
T = TypeVar("T")


def create(settings: Mapping[str, Any]) -> GraphitiEngine:
    """The ``graphiti`` entry point.

    Raises:
        UsageError: an unknown or invalid setting, no endpoint, the key variable unset, or
            graphiti-core not installed.
        EngineError: Graphiti or Kuzu could not be set up (its reason).
    """
    conf = _settings(settings)
    owned = conf["data_dir"] is None
    folder = tempfile.mkdtemp(prefix="memeval-graphiti-") if owned else os.path.abspath(conf["data_dir"])
    try:
        os.makedirs(folder, exist_ok=True)
        return GraphitiEngine(conf, folder, owned)
    except BaseException:
        if owned:
            shutil.rmtree(folder, ignore_errors=True)
        raise


def _settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    for key in settings:
        if key not in _SETTINGS:
            raise UsageError(f"graphiti engine: unknown setting {key!r}{did_you_mean(key, _SETTINGS)}")
    conf = {**_DEFAULTS, "data_dir": None, **settings}
    conf["url"] = conf.get("url") or os.environ.get(URL_ENV)
    if not conf["url"]:
        raise UsageError(f"graphiti engine: no endpoint: set the url setting or {URL_ENV}")
    dims = conf["embed_dims"]
    if isinstance(dims, bool) or not isinstance(dims, int) or dims < 1:
        raise UsageError(f"graphiti engine: embed_dims must be a positive integer, not {dims!r}")
    env = conf.get("api_key_env")
    if env is not None and not os.environ.get(str(env)):
        raise UsageError(f"graphiti engine: the key variable {env} is not set")
    return conf


def _graphiti(conf: Mapping[str, Any], folder: str) -> Any:
    """A Graphiti on Kuzu under ``folder``, pointed at the configured endpoint."""
    os.environ.setdefault("GRAPHITI_TELEMETRY_ENABLED", "false")
    try:
        from graphiti_core import Graphiti
        from graphiti_core.cross_encoder.openai_reranker_client import OpenAIRerankerClient
        from graphiti_core.driver.kuzu_driver import KuzuDriver
        from graphiti_core.embedder.openai import OpenAIEmbedder, OpenAIEmbedderConfig
        from graphiti_core.llm_client.config import LLMConfig
        from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient
    except ImportError as err:
        raise UsageError(f"graphiti engine: needs pip install 'memeval-harness[graphiti]' ({err})") from err
    env = conf.get("api_key_env")
    key = os.environ[str(env)] if env else PLACEHOLDER_KEY
    llm = LLMConfig(api_key=key, model=conf["llm_model"], small_model=conf["llm_model"], base_url=conf["url"])
    embedder = OpenAIEmbedderConfig(api_key=key, embedding_model=conf["embed_model"],
                                    embedding_dim=conf["embed_dims"], base_url=conf["url"])
    driver = KuzuDriver(db=os.path.join(folder, "graph.kuzu"))
    driver._database = ""  # read by add_episode in 0.31, never set by KuzuDriver; Kuzu has one database
    return Graphiti(graph_driver=driver, llm_client=OpenAIGenericClient(config=llm),
                    embedder=OpenAIEmbedder(embedder), cross_encoder=OpenAIRerankerClient(config=llm))


def group_id(tenant: str) -> str:
    """The Graphiti group of a tenant (any tenant string maps to a valid group id)."""
    return "t" + hashlib.sha256(tenant.encode("utf-8")).hexdigest()[:24]


class GraphitiEngine(AcceptedListing):
    """Graphiti behind the engine contract. Graphiti is async: calls are serialised and run
    on this engine's own event loop."""

    def __init__(self, conf: Mapping[str, Any], folder: str, owned: bool) -> None:
        """Prefer :func:`create`; ``owned`` means ``folder`` is removed on close."""
        self._folder, self._owned = folder, owned
        self._public = {k: conf[k] for k in ("url", "llm_model", "embed_model", "embed_dims")}
        self._loop = asyncio.new_event_loop()
        self._lock = threading.Lock()
        self._logs: dict[str, ItemLog] = {}
        self._episodes: dict[str, tuple[str, str]] = {}  # episode uuid -> (tenant, item id)
        self._uuids: dict[tuple[str, str], str] = {}  # (tenant, item id) -> episode uuid
        try:
            self._graph = self._run("set up", self._setup(conf))
        except BaseException:
            self._loop.close()
            raise

    async def _setup(self, conf: Mapping[str, Any]) -> Any:
        graph = _graphiti(conf, self._folder)
        await graph.build_indices_and_constraints()
        # a no-op on Kuzu in graphiti-core 0.31: the full-text indexes come from graph_ops
        await graph.driver.graph_ops.build_indices_and_constraints(graph.driver)
        return graph

    def _run(self, what: str, call: Awaitable[T]) -> T:
        """``call`` on the engine loop, any failure as a one-line EngineError."""
        try:
            return self._loop.run_until_complete(call)
        except (EngineError, UsageError):
            raise
        except Exception as err:
            reason = " ".join(str(err).split())[:300] or "no reason given"
            raise EngineError(f"graphiti {what} failed: {type(err).__name__}: {reason}") from None

    def info(self) -> EngineInfo:
        """Name, graphiti-core's version, capabilities and settings."""
        settings = {**self._public, "graph_store": "kuzu (embedded, on disk)"}
        return EngineInfo("graphiti", importlib.metadata.version("graphiti-core"), capabilities_of(self),
                          settings=settings)

    def write(self, item: MemoryItem) -> WriteReceipt:
        """One ``add_episode`` of the item; a second write of the same id in this process stores
        nothing.

        Raises:
            EngineError: an invalid ``item.at``, or Graphiti or the endpoint failed (the item
                is then not accepted, so a retry writes it again).
        """
        with self._lock:
            log = self._logs.setdefault(item.tenant, ItemLog())
            if item.id in log:
                return WriteReceipt(item.id, replayed=True)
            recency_key(item, 0)  # refuses a malformed timestamp before Graphiti stores anything
            when = datetime.fromisoformat(item.at) if item.at else datetime.now(UTC)
            added = self._run("add_episode", self._graph.add_episode(
                name=item.id, episode_body=item.text, source_description=f"memeval {item.kind} in {item.node}",
                reference_time=when, group_id=group_id(item.tenant)))
            log.add(item)
            self._episodes[added.episode.uuid] = (item.tenant, item.id)
            self._uuids[(item.tenant, item.id)] = added.episode.uuid
            return WriteReceipt(item.id)

    def recall(self, request: RecallRequest) -> list[Hit]:
        """At most ``request.limit`` items of the requested nodes: the sources of the edges
        ``search`` ranks for the query (see the module docstring), or, for ``query=None``, the
        accepted items newest first (scored ``1 / position``).

        Raises:
            EngineError: Graphiti or the endpoint failed.
        """
        if request.limit <= 0 or not request.nodes or (request.query is not None and not request.query.strip()):
            return []
        with self._lock:
            log = self._logs.get(request.tenant)
            if log is None:
                return []
            if request.query is None:
                found = [i for i in log.newest() if node_matches(i.node, request.nodes)][: request.limit]
                return [Hit(item, 1.0 / (i + 1)) for i, item in enumerate(found)]
            items = self._search(request, log)
        return [Hit(item, 1.0 / (rank + 1)) for rank, item in enumerate(items)]

    def _search(self, request: RecallRequest, log: ItemLog) -> list[MemoryItem]:
        """The first ``limit`` distinct source items (in the requested nodes) of the edges
        ``search`` ranks: ``limit`` edges first, then twice as many while edges were cut off
        and items are missing, up to ``EDGE_FANOUT`` times the limit."""
        wanted, words = request.limit, " ".join(_WORD.findall(request.query or ""))
        if not words:
            return []
        while True:
            edges = self._run("search", self._graph.search(words, group_ids=[group_id(request.tenant)],
                                                           num_results=wanted))
            ranked = [self._episodes.get(e) for edge in edges for e in edge.episodes]
            ids = dict.fromkeys(i for t, i in filter(None, ranked) if t == request.tenant and i in log)
            items = [log.get(i) for i in ids if node_matches(log.get(i).node, request.nodes)]
            if len(items) >= request.limit or len(edges) < wanted or wanted >= EDGE_FANOUT * request.limit:
                return items[: request.limit]
            wanted *= 2

    def forget(self, tenant: str, ids: tuple[str, ...]) -> int:
        """``remove_episode`` for each accepted item; returns how many were accepted."""
        with self._lock:
            log = self._logs.get(tenant)
            if log is None or not ids:
                return 0
            held = [i for i in dict.fromkeys(ids) if i in log]
            for item_id in held:
                episode = self._uuids[(tenant, item_id)]
                self._run("remove_episode", self._graph.remove_episode(episode))
                log.remove([item_id])
                del self._uuids[(tenant, item_id)], self._episodes[episode]
            return len(held)

    def erase(self, tenant: str) -> None:
        """Clear the tenant's group (episodes, entities, edges) and its listing."""
        from graphiti_core.utils.maintenance.graph_data_operations import clear_data

        with self._lock:
            self._run("clear_data", clear_data(self._graph.driver, group_ids=[group_id(tenant)]))
            self._logs.pop(tenant, None)
            self._episodes = {e: (t, i) for e, (t, i) in self._episodes.items() if t != tenant}
            self._uuids = {(t, i): e for (t, i), e in self._uuids.items() if t != tenant}

    def inspect(self, tenant: str) -> Derived:
        """The fact edges Graphiti holds for the tenant, oldest first, each as a fact
        ``<source entity> <relation> <target entity>``; no beliefs, no conflicts."""
        query = ("MATCH (s:Entity)-[:RELATES_TO]->(e:RelatesToNode_)-[:RELATES_TO]->(t:Entity) "
                 "WHERE e.group_id = $group_id "
                 "RETURN s.name AS s, e.name AS p, t.name AS o ORDER BY e.created_at, e.uuid")
        with self._lock:
            rows, _, _ = self._run("inspect", self._graph.driver.execute_query(query, group_id=group_id(tenant)))
        return Derived(facts=tuple(Belief(str(r["s"]), str(r["p"]), str(r["o"])) for r in rows))

    def close(self) -> None:
        """Close Graphiti and the loop, and remove the folder if owned."""
        with self._lock:
            try:
                self._run("close", self._graph.close())
            finally:
                self._loop.close()
                if self._owned:
                    shutil.rmtree(self._folder, ignore_errors=True)


ADAPTER = Adapter(create, url_env=URL_ENV, extras=(("graphiti_core", "graphiti"),))
