"""Sweep cells on a remote executor (``memeval sweep --executor dask``).

A worker runs its cell into a temporary folder of its own, with the port the driver assigned
(ports are handed out by the driver's pool, so two workers on one machine never race for one),
and returns the cell's result and the folder's files as bytes; the driver writes them under the
cell's folder. Workers need the matrix's suite and engine files at the same paths (a shared
checkout); no shared output folder is needed.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace

from memeval.runner.executor import Executor
from memeval.spec.matrix import Matrix
from memeval.sweep.cell import CellResult, Progress, run_cell
from memeval.sweep.cells import Cell
from memeval.sweep.control import Control
from memeval.sweep.ports import PortPool


@dataclass(frozen=True)
class CellUnit:
    """One cell as shipped to a worker: the matrix (values, no open resources), the cell and its port."""

    matrix: Matrix
    cell: Cell
    port: int


@dataclass(frozen=True)
class CellOutcome:
    """What a worker sends back: the cell's result (with the driver's folder) and its files."""

    result: CellResult
    files: dict[str, bytes]


def run_cell_unit(unit: CellUnit) -> CellOutcome:
    """Run the unit's cell in a temporary folder on this worker; never raises for a cell failure."""
    with tempfile.TemporaryDirectory(prefix="memeval-cell-") as tmp:
        here = replace(unit.cell, folder=os.path.join(tmp, unit.cell.label))
        result = run_cell(unit.matrix, here, PortPool(unit.port, unit.port), Control(), lambda _: None)
        files = {}
        if os.path.isdir(here.folder):
            for name in sorted(os.listdir(here.folder)):
                with open(os.path.join(here.folder, name), "rb") as fh:
                    files[name] = fh.read()
    return CellOutcome(replace(result, cell=unit.cell), files)


def run_remote(matrix: Matrix, cells: list[Cell], executor: Executor,
               progress: Progress) -> Iterator[tuple[Cell, CellResult]]:
    """Every cell on ``executor``; each result's files are written into its folder as it comes back."""
    ports = PortPool(*matrix.ports)
    held: dict[str, int] = {}
    units: list[tuple[str, CellUnit]] = []
    by_label = {c.label: c for c in cells}
    for cell in cells:
        port = ports.acquire()
        if port is None:
            yield cell, CellResult(cell, "failed", f"no free port in {matrix.ports[0]}-{matrix.ports[1]}")
            continue
        held[cell.label] = port
        units.append((cell.label, CellUnit(matrix, cell, port)))
        progress(f"cell {cell.label}: submitted (port {port})")
    try:
        for label, outcome in executor.map(run_cell_unit, units):
            ports.release(held.pop(label))
            _write(by_label[label].folder, outcome.files)
            result = outcome.result
            progress(f"cell {label}: {result.status}" + (f": {result.reason}" if result.reason else "") +
                     ("" if result.seconds is None else f" ({result.seconds:.1f} s)"))
            yield by_label[label], result
    finally:
        for port in held.values():
            ports.release(port)


def _write(folder: str, files: dict[str, bytes]) -> None:
    os.makedirs(folder, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(folder, os.path.basename(name)), "wb") as fh:
            fh.write(data)
