"""mem0 (``mem0ai`` 2.x, its ``Memory`` class) as a memeval engine, in-process.

Install with ``pip install 'memeval-harness[mem0]'``. mem0's LLM and embedder are its ``openai``
providers pointed at any OpenAI-compatible endpoint (real models, or memeval's mock inference
server, which answers mem0's extraction call by copying lines: wiring, not intelligence). Its
vector store is qdrant in local mode on disk and its history a SQLite file, both under the
engine's data folder; telemetry is off and ``MEM0_DIR`` points (unless set) under that folder
when mem0 is first imported, so nothing is written to the home directory.

Mapping: a tenant is mem0's ``user_id`` and an item's agent its ``agent_id``; threads are not
mem0 runs (a run id may not hold whitespace, a thread may) and stay in the metadata with the
node and every other field (:mod:`memeval.engines.mem0.records`). A write is one ``add`` of the
item's text as a single message, with ``infer`` raw storage (false) or mem0's LLM extraction
(true, the default). Recall is ``search`` with ``top_k`` = the request's limit and the node
filter applied inside qdrant; ``query=None`` gives the memories ``get_all`` holds in those
nodes, newest first. A hit is the source item with the memory's text. mem0 adds BM25 to its
ranking only with ``fastembed`` and entity boosts only with spaCy installed; ``info`` says which
(neither is in the ``mem0`` extra). ``forget`` deletes every memory of the items, ``erase`` is
``delete_all`` for the user.

Listing: mem0 has no list of what was written (``get_all`` lists derived memories, and an
extraction may keep nothing of a turn, or fold it into an equal memory it already holds), so
``page`` lists the items this engine accepted (``add`` returned), as written, newest first;
what mem0 kept of them is ``inspect`` and what it finds is ``recall``. The log, like the
replay check, lives in this process.

Capabilities: ``forget``, ``erase``, and with ``infer`` also ``inspect`` (the memories
``get_all`` returns are mem0's captured facts; without ``infer`` they are the raw turns, so
``inspect`` is not declared). Belief builds, conflicts, answers, usage and a backlog do not
exist in mem0 and are not declared.

Settings: ``url`` (the endpoint, e.g. ``http://127.0.0.1:8000/v1``; else ``$MEM0_OPENAI_URL``),
``llm_model``, ``embed_model``, ``embed_dims`` (default 256), ``api_key_env`` (the NAME of the
variable holding the key; without it a placeholder key is sent, fine for the mock), ``infer``
(default true), ``threshold`` (mem0's minimum search score, default 0.1 as in mem0) and
``data_dir`` (default: a temporary folder this engine owns and removes on close).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import math
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping
from typing import Any

from memeval.engines.mem0 import records
from memeval.engines.base import (Adapter, Belief, Derived, EngineInfo, Hit, MemoryItem, RecallRequest, WriteReceipt,
                                  capabilities_of)
from memeval.engines.listing import AcceptedListing, ItemLog, recency_key
from memeval.errors import EngineError, UsageError
from memeval.util.suggest import did_you_mean

URL_ENV = "MEM0_OPENAI_URL"
PLACEHOLDER_KEY = "memeval-no-key"
COLLECTION = "memeval"
LIST_CAP = 100_000
_SETTINGS = ("url", "llm_model", "embed_model", "embed_dims", "api_key_env", "infer", "threshold", "data_dir")
_DEFAULTS: dict[str, Any] = {"llm_model": "mock-chat", "embed_model": "mock-embed", "embed_dims": 256,
                             "infer": True, "threshold": 0.1}


def create(settings: Mapping[str, Any]) -> Mem0Engine:
    """The ``mem0`` entry point.

    Raises:
        UsageError: an unknown or invalid setting, no endpoint, the key variable unset, or
            mem0 not installed.
        EngineError: mem0 could not be configured (its reason).
    """
    conf = _settings(settings)
    owned = conf["data_dir"] is None
    folder = tempfile.mkdtemp(prefix="memeval-mem0-") if owned else os.path.abspath(conf["data_dir"])
    try:
        os.makedirs(folder, exist_ok=True)
        memory = _guard("configure", lambda: _memory_class(folder).from_config(_config(conf, folder)))
    except BaseException:
        if owned:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return (Mem0Extracting if conf["infer"] else Mem0Engine)(memory, conf, folder, owned)


def _settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    for key in settings:
        if key not in _SETTINGS:
            raise UsageError(f"mem0 engine: unknown setting {key!r}{did_you_mean(key, _SETTINGS)}")
    conf = {**_DEFAULTS, "data_dir": None, **settings}
    conf["url"] = conf.get("url") or os.environ.get(URL_ENV)
    if not conf["url"]:
        raise UsageError(f"mem0 engine: no endpoint: set the url setting or {URL_ENV}")
    if not isinstance(conf["infer"], bool):
        raise UsageError(f"mem0 engine: infer must be true or false, not {conf['infer']!r}")
    dims, threshold = conf["embed_dims"], conf["threshold"]
    if isinstance(dims, bool) or not isinstance(dims, int) or dims < 1:
        raise UsageError(f"mem0 engine: embed_dims must be a positive integer, not {dims!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
        raise UsageError(f"mem0 engine: threshold must be a number in [0, 1], not {threshold!r}")
    env = conf.get("api_key_env")
    if env is not None and not os.environ.get(str(env)):
        raise UsageError(f"mem0 engine: the key variable {env} is not set")
    return conf


def _memory_class(folder: str) -> Any:
    """mem0's ``Memory``, imported with telemetry off and, unless the caller set its own,
    ``MEM0_DIR`` under ``folder``. mem0 reads both once, at its first import; ``MEM0_DIR`` is
    set only for that import, so no later process inherits a folder this engine removes."""
    os.environ["MEM0_TELEMETRY"] = "False"
    preset = "MEM0_DIR" in os.environ
    if not preset:
        os.environ["MEM0_DIR"] = os.path.join(folder, "mem0-dir")
    try:
        from mem0 import Memory
    except ImportError as err:
        raise UsageError(f"mem0 engine: needs pip install 'memeval-harness[mem0]' ({err})") from err
    finally:
        if not preset:
            del os.environ["MEM0_DIR"]
    return Memory


def _config(conf: Mapping[str, Any], folder: str) -> dict[str, Any]:
    env = conf.get("api_key_env")
    key = os.environ[str(env)] if env else PLACEHOLDER_KEY
    endpoint = {"api_key": key, "openai_base_url": conf["url"]}
    store = {"collection_name": COLLECTION, "path": os.path.join(folder, "qdrant"),
             "embedding_model_dims": conf["embed_dims"], "on_disk": True}
    embedder = {"model": conf["embed_model"], "embedding_dims": conf["embed_dims"], **endpoint}
    return {
        "vector_store": {"provider": "qdrant", "config": store},
        "llm": {"provider": "openai", "config": {"model": conf["llm_model"], "temperature": 0, **endpoint}},
        "embedder": {"provider": "openai", "config": embedder},
        "history_db_path": os.path.join(folder, "history.db"),
    }


def _guard(what: str, call: Callable[[], Any]) -> Any:
    """``call()``, with any failure of mem0, qdrant or the endpoint as a one-line EngineError."""
    try:
        return call()
    except (EngineError, UsageError):
        raise
    except Exception as err:
        reason = " ".join(str(err).split())[:300] or "no reason given"
        raise EngineError(f"mem0 {what} failed: {type(err).__name__}: {reason}") from None


class Mem0Engine(AcceptedListing):
    """A mem0 ``Memory`` behind the engine contract; calls are serialised (qdrant's local mode
    is not safe across threads). Raw storage (``infer`` false); see :class:`Mem0Extracting`."""


    def __init__(self, memory: Any, conf: Mapping[str, Any], folder: str, owned: bool) -> None:
        """Prefer :func:`create`; ``owned`` means ``folder`` is removed on close."""
        self._memory = memory
        self._infer = bool(conf["infer"])
        self._threshold = float(conf["threshold"])
        self._public = {k: conf[k] for k in ("url", "llm_model", "embed_model", "embed_dims", "infer", "threshold")}
        self._folder, self._owned = folder, owned
        self._logs: dict[str, ItemLog] = {}
        self._seq = 0
        self._lock = threading.Lock()

    def info(self) -> EngineInfo:
        """Name, mem0's version, capabilities (``inspect`` only with ``infer``) and settings."""
        settings = {**self._public, "vector_store": "qdrant (local, on disk)",
                    "keyword_search": importlib.util.find_spec("fastembed") is not None,
                    "entity_boost": importlib.util.find_spec("spacy") is not None}
        return EngineInfo("mem0", importlib.metadata.version("mem0ai"), capabilities_of(self), settings=settings)

    def write(self, item: MemoryItem) -> WriteReceipt:
        """One ``add`` of the item; a second write of the same id in this process stores nothing.

        Raises:
            EngineError: an invalid ``item.at``, or mem0 or the endpoint failed (the item is
                then not accepted, so a retry writes it again).
        """
        with self._lock:
            log = self._logs.setdefault(item.tenant, ItemLog())
            if item.id in log:
                return WriteReceipt(item.id, replayed=True)
            recency_key(item, 0)  # refuses a malformed timestamp before mem0 stores anything
            self._seq += 1
            meta = records.metadata(item, self._seq)
            _guard("add", lambda: self._memory.add(records.messages(item), user_id=item.tenant, agent_id=item.agent,
                                                   metadata=meta, infer=self._infer))
            log.add(item)
            return WriteReceipt(item.id)

    def recall(self, request: RecallRequest) -> list[Hit]:
        """At most ``request.limit`` memories in the requested nodes: mem0's ``search`` ranking
        (its score) for a query, newest first (scored ``1 / position``) for ``query=None``.
        A query of only whitespace, which mem0 refuses, matches nothing.

        Raises:
            EngineError: mem0 or the endpoint failed.
        """
        if request.limit <= 0 or not request.nodes or (request.query is not None and not request.query.strip()):
            return []
        filters = records.node_filter(request.tenant, tuple(request.nodes))
        with self._lock:
            if request.query is None:
                found = sorted(self._all(filters), key=lambda pair: recency_key(pair[1], pair[0]), reverse=True)
                return [Hit(item, 1.0 / (i + 1)) for i, (_, item) in enumerate(found[: request.limit])]
            result = _guard("search", lambda: self._memory.search(request.query, top_k=request.limit, filters=filters,
                                                                  threshold=self._threshold))
        try:
            scored = [(m, float(m["score"])) for m in result["results"]]
        except (KeyError, TypeError, ValueError) as err:  # a hit without a score is mem0 misbehaving, not a miss
            raise EngineError(f"mem0 search: a result without a numeric score ({type(err).__name__}: {err})") from err
        bad = [score for _, score in scored if not math.isfinite(score)]
        if bad:
            raise EngineError(f"mem0 search: a result scored {bad[0]}, not a finite number")
        hits = [(records.item_of(m), score) for m, score in scored]
        return [Hit(item, score) for item, score in hits if item is not None]

    def forget(self, tenant: str, ids: tuple[str, ...]) -> int:
        """Delete every memory mem0 holds of the given items and drop them from the listing;
        returns how many of the items were accepted or had memories."""
        if not ids:
            return 0
        with self._lock:
            found = _guard("get_all", lambda: self._memory.get_all(
                filters={"user_id": tenant, records.ID: {"in": list(ids)}}, top_k=LIST_CAP))["results"]
            for memory in found:
                _guard("delete", lambda: self._memory.delete(memory["id"]))
            held = {records.item_of(m).id for m in found if records.item_of(m) is not None}  # type: ignore[union-attr]
            accepted = self._logs[tenant].remove(ids) if tenant in self._logs else []
            return len(held | set(accepted))

    def erase(self, tenant: str) -> None:
        """``delete_all`` for the tenant's user, and an empty listing."""
        with self._lock:
            _guard("delete_all", lambda: self._memory.delete_all(user_id=tenant))
            self._logs.pop(tenant, None)

    def close(self) -> None:
        """Close mem0 (its qdrant client and history file) and remove the folder if owned."""
        with self._lock:
            try:
                _guard("close", self._memory.close)
                # Memory.close() closes only the history db; the local qdrant client keeps its
                # files and lock open until garbage collection, after the folder is gone.
                client = getattr(getattr(self._memory, "vector_store", None), "client", None)
                if client is not None:
                    _guard("close", client.close)
            finally:
                if self._owned:
                    shutil.rmtree(self._folder, ignore_errors=True)

    def _all(self, filters: dict[str, Any]) -> list[tuple[int, MemoryItem]]:
        """Every memeval memory ``get_all`` returns for ``filters`` with its write number, oldest
        write first.

        Raises:
            EngineError: mem0 failed, or the user holds more than ``LIST_CAP`` memories (mem0's
                ``get_all`` cannot page, and a silently cut listing would lie).
        """
        found = _guard("get_all", lambda: self._memory.get_all(filters=filters, top_k=LIST_CAP))["results"]
        if len(found) >= LIST_CAP:
            raise EngineError(f"mem0 holds {LIST_CAP} or more memories for one tenant; get_all cannot list them all")
        items = [(records.seq_of(m), records.item_of(m)) for m in found]
        # qdrant scrolls by point id (a random uuid): order the memories of one write by text
        return sorted(((seq, item) for seq, item in items if item is not None), key=lambda p: (p[0], p[1].text))


class Mem0Extracting(Mem0Engine):
    """mem0 with LLM extraction (``infer`` true): its memories are derived facts, so it has
    ``inspect``; raw storage does not (its memories are the turns themselves)."""

    def inspect(self, tenant: str) -> Derived:
        """mem0's captured memories of the tenant (``get_all``), oldest first, each as a fact
        ``<node> memory <text>``; no beliefs, no conflicts (mem0 has neither)."""
        with self._lock:
            memories = self._all({"user_id": tenant})
        return Derived(facts=tuple(Belief(item.node, "memory", item.text) for _, item in memories))


ADAPTER = Adapter(create, url_env=URL_ENV, extras=(("mem0", "mem0"),))
