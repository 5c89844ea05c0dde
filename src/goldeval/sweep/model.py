"""A sweep's results as typed data; `to_dict()` is the JSON documented in docs/sweep.md.

Renderers (the terminal table, the HTML sweep view) read a SweepResult and compute nothing: the
intervals, the tests against the best, the Pareto fronts and the heatmaps are computed in
`goldeval.sweep.analysis`, once, in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from goldeval.metrics.definitions import Metric
from goldeval.scorecard.model import Scorecard
from goldeval.sweep.cost import Cost
from goldeval.sweep.grid import DIALS, Cell, Dial

SCHEMA = "goldeval.sweep/1"


@dataclass
class VsBest:
    """A configuration against the best one on the primary metric (paired test, Holm across all)."""

    diff: float
    """This configuration's mean minus the best's (<= 0)."""
    ci: tuple[float, float]
    p: float
    p_holm: float
    test: str
    within_noise: bool
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        return {"diff": self.diff, "ci": list(self.ci), "p": self.p, "p_holm": self.p_holm, "test": self.test,
                "within_noise": self.within_noise, "verdict": self.verdict}


@dataclass
class CellResult:
    """One configuration: its dials, scores with intervals, cost, and standing against the best."""

    cell: Cell
    metrics: dict[Metric, float]
    intervals: dict[Metric, tuple[float, float]]
    cost: Cost
    config: dict[str, Any]
    cached: bool
    """Every run this configuration reads was already stored (nothing was searched for it)."""
    n_errors: int = 0
    vs_best: VsBest | None = None
    """None for the best configuration itself."""
    pareto: list[str] = field(default_factory=list)
    """The cost axes on whose quality-cost Pareto front this configuration lies."""
    scorecard: Scorecard | None = None
    """The configuration's own Scorecard (in memory only; `--cards DIR` writes them)."""

    @property
    def label(self) -> str:
        return self.cell.label

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label, "spec": self.cell.spec, "dials": self.cell.dials(), "reranker": self.cell.reranker,
            "metrics": {str(m): v for m, v in self.metrics.items()},
            "intervals": {str(m): list(ci) for m, ci in self.intervals.items()},
            "vs_best": self.vs_best.to_dict() if self.vs_best else None,
            "cost": self.cost.to_dict(), "pareto": list(self.pareto), "cached": self.cached,
            "n_errors": self.n_errors, "config": self.config,
        }


@dataclass
class SweepResult:
    """Every configuration of a grid, scored on the same questions, with what it costs."""

    cells: list[CellResult]
    """Best first on the primary metric (then grid order)."""
    dials: dict[str, list[Dial]]
    metrics: list[Metric]
    headline: list[Metric]
    k: list[int]
    depth: int
    level: str
    best: str | None = None
    statistics: dict[str, Any] = field(default_factory=dict)
    """`confidence`, `alpha`, `resamples`, `seed`, `method`, `correction`, `within_noise` (count)."""
    pareto: dict[str, list[str]] = field(default_factory=dict)
    """Cost axis -> labels on the front, cheapest first."""
    heatmaps: list[dict[str, Any]] = field(default_factory=list)
    stages: dict[str, Any] = field(default_factory=dict)
    """What was computed and what came from the cache, and how long each stage took."""
    identity: dict[str, Any] = field(default_factory=dict)
    """corpus, golden, goldeval_version, created, machine, executor, workers."""

    @property
    def primary(self) -> Metric:
        """The metric the configurations are ranked and tested on: the first headline metric."""
        return self.headline[0]

    def cell(self, label: str) -> CellResult:
        for c in self.cells:
            if c.label == label:
                return c
        raise KeyError(label)

    def varying(self) -> list[str]:
        """The dials that take more than one value across the configurations (None counts: bm25's model)."""
        return varying_dials(self.cells)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA, "identity": self.identity, "dials": self.dials, "varying": self.varying(),
            "metrics": [str(m) for m in self.metrics], "headline": [str(m) for m in self.headline],
            "primary": str(self.primary), "k": self.k, "depth": self.depth, "level": self.level,
            "best": self.best, "statistics": self.statistics, "cells": [c.to_dict() for c in self.cells],
            "pareto": self.pareto, "heatmaps": self.heatmaps, "stages": self.stages,
        }


def varying_dials(cells: Sequence[CellResult], *, where_they_apply: bool = False) -> list[str]:
    """The one rule for "which dials vary": those taking more than one value across `cells`. "Does not apply"
    (None: bm25's model) is a value of its own unless `where_they_apply` (the heatmaps, whose pickers list only
    dials with several real values)."""
    def values(dial: str) -> set[str]:
        taken = (c.cell.dials()[dial] for c in cells)
        return {repr(v) for v in taken if v is not None or not where_they_apply}
    return [d for d in DIALS if len(values(d)) > 1]
