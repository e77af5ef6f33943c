"""Where the reference engine keeps its tenants between runs (the ``path`` setting).

Layout: ``<path>/tenants/<sha256 of the tenant name, 32 hex>/`` holds one tenant as
:meth:`TenantStore.save` writes it, plus ``tenant.json`` with its name. A tenant is written
whole to a sibling folder and then swapped in, so an interrupted save leaves the previous one.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

from memeval.engines.reference.tuning import DEFAULT, Tuning
from memeval.engines.reference.embedders import DenseIndex, QueryVectors
from memeval.engines.reference.store import TenantStore
from memeval.errors import EngineError


def open_tenants(path: Path, queries: QueryVectors | None, min_similarity: float,
                 tuning: Tuning = DEFAULT) -> dict[str, TenantStore]:
    """Every tenant saved under ``path`` (none when it does not exist yet).

    Raises:
        EngineError: a saved tenant cannot be read.
    """
    tenants = {}
    for folder in sorted((path / "tenants").glob("*")) if (path / "tenants").is_dir() else ():
        if folder.name.endswith(".saving"):
            continue
        if not (folder / "tenant.json").exists():
            # A save writes tenant.json last and swaps the folder in whole: one without it is a
            # failed cleanup, and skipping it would open that tenant empty.
            raise EngineError(f"reference engine: the tenant folder {folder} has no tenant.json "
                              "(a save or erase did not finish); remove the folder or restore it")
        try:
            name = json.loads((folder / "tenant.json").read_text(encoding="utf-8"))["tenant"]
            tenants[name] = TenantStore.load(folder, name, _dense_opener(queries, min_similarity, tuning), tuning)
        except (OSError, ValueError, KeyError) as err:
            raise EngineError(f"reference engine: cannot open the tenant saved in {folder}: {err}") from err
    return tenants


def save_tenants(path: Path, tenants: Mapping[str, TenantStore]) -> None:
    """Write every tenant changed since it was opened or built.

    Raises:
        EngineError: a tenant cannot be written.
    """
    for name, store in tenants.items():
        if not store.changes:
            continue
        final = folder_of(path, name)
        staging = final.with_name(final.name + ".saving")
        try:
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir(parents=True)
            store.save(staging)
            (staging / "tenant.json").write_text(json.dumps({"tenant": name}), encoding="utf-8")
            shutil.rmtree(final, ignore_errors=True)
            staging.rename(final)
        except OSError as err:
            raise EngineError(f"reference engine: cannot save tenant {name!r} under {path}: {err}") from err
        store.changes = 0


def folder_of(path: Path, tenant: str) -> Path:
    """The folder that holds ``tenant`` under ``path``."""
    return path / "tenants" / hashlib.sha256(tenant.encode()).hexdigest()[:32]


def _dense_opener(queries: QueryVectors | None, min_similarity: float,
                  tuning: Tuning) -> Callable[[Path], DenseIndex] | None:
    """How a tenant's vector index opens: from its folder, or, when it was saved without one,
    by embedding its texts now (None: the engine has no dense signal)."""
    if queries is None:
        return None

    def open_dense(folder: Path) -> DenseIndex:
        if (folder / "vectors.npy").exists():
            return DenseIndex.load(folder, queries, min_similarity, tuning)
        return DenseIndex(queries, min_similarity, tuning)

    return open_dense
