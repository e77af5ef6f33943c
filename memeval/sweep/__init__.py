"""Flag sweeps: one engine server per (profile, repeat), each cell's run compared to the
baseline at the end.

:mod:`memeval.sweep.cells` plans the cells, :mod:`memeval.sweep.ports` hands out ports,
:mod:`memeval.sweep.cell` runs one cell (server, run, drift guard), :mod:`memeval.sweep.runner`
schedules them ``parallel`` at a time and :mod:`memeval.sweep.summary` writes the summary.
"""

from memeval.sweep.runner import SweepOptions, run_sweep

__all__ = ["SweepOptions", "run_sweep"]
