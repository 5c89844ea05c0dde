"""Every dial in one sweep: evaluate a grid of configurations, each stage computed once (docs/sweep.md).

    from goldeval.sweep import Grid, Settings, sweep
    grid = Grid(chunking=("none", "600:100"), retriever=("hybrid",), model=("minilm-l3",),
                fusion=("norm",), weight=(0.3, 0.5, 0.7))
    result = sweep(grid, golden, corpus=corpus, settings=Settings(k=(1, 5, 10)))
    result.best, result.pareto["latency_p50_ms"], result.to_dict()
"""

from goldeval.sweep.config import Settings, SweepFile, load_sweep_file
from goldeval.sweep.distributed import LocalExecutor, RayExecutor, make_executor
from goldeval.sweep.grid import Cell, Grid, grid_from_mapping
from goldeval.sweep.model import CellResult, SweepResult, VsBest
from goldeval.sweep.run import sweep

__all__ = ["Cell", "CellResult", "Grid", "LocalExecutor", "RayExecutor", "Settings", "SweepFile", "SweepResult",
           "VsBest", "grid_from_mapping", "load_sweep_file", "make_executor", "sweep"]
