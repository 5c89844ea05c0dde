"""What the report says about the configurations, computed once here (renderers compute nothing).

- Within noise of the best: the best configuration is the one with the highest mean on the primary
  metric; every other one is tested against it, paired on the same questions, with the tests of
  `goldeval.stats.compare.compare_values` (exact McNemar for 0/1 metrics, paired randomization
  otherwise) and Holm's correction across all of those tests (`goldeval.stats.paired.holm`). One that
  the corrected test cannot tell from the best is "within noise". The best is chosen on the same
  questions it is tested on, so its lead is, if anything, flattering: read "within noise" as "a
  candidate too", not "as good".
- The Pareto front of quality (primary metric) against each cost (`goldeval.sweep.pareto`).
- Heatmaps: for every two dials that take several values where they apply, the best primary-metric
  value over the configurations at each pair of values (and which configuration it is). "Does not apply"
  (None: bm25's model) is no value of its own here: a grid with one model has no model axis to pick
  (issue 24), the retriever dial already tells bm25 from the dense configurations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from goldeval.metrics.definitions import Metric
from goldeval.stats.compare import compare_values, format_p
from goldeval.sweep.cost import COST_AXES
from goldeval.sweep.model import CellResult, VsBest, varying_dials
from goldeval.sweep.pareto import pareto_front


def rank_cells(cells: Sequence[CellResult], primary: Metric) -> list[CellResult]:
    """Best first on the primary metric; equal means keep grid order (a stable sort)."""
    return sorted(cells, key=lambda c: -c.metrics.get(primary, float("-inf")))


def test_against_best(cells: Sequence[CellResult], primary: Metric, *, seed: int, resamples: int,
                      confidence: float) -> str | None:
    """Fill `vs_best` of every configuration but the best (the first of `cells`); returns the best's label."""
    if not cells:
        return None
    best, others = cells[0], list(cells[1:])
    best.vs_best = None
    if not others:
        return best.label
    reference = _values(best, primary)
    if not len(reference):  # no answerable question: nothing to test (and no metric to rank by)
        return best.label
    # one comparison for every configuration against the best: the resampled questions and sign patterns
    # are drawn once and shared by all columns (each column's numbers are those of its own comparison)
    values = {best.label: {primary: reference}, **{o.label: {primary: _values(o, primary)} for o in others}}
    comparison = compare_values(values, metrics=[primary], pairs=[(o.label, best.label) for o in others],
                                seed=seed, resamples=resamples, confidence=confidence)
    results = comparison.results  # a = the other configuration, b = the best; Holm across them when several
    alpha = 1 - confidence
    for other, r in zip(others, results, strict=True):
        p_holm = r.p_adjusted
        within = bool(p_holm >= alpha)
        other.vs_best = VsBest(diff=r.diff, ci=(r.ci[0], r.ci[1]), p=r.p, p_holm=float(p_holm), test=r.test,
                               within_noise=within, verdict=_verdict(r.diff, r.ci, float(p_holm), within, confidence))
    return best.label


def _values(cell: CellResult, metric: Metric) -> np.ndarray:
    card = cell.scorecard
    if card is None or not card.retrievers:
        raise ValueError(f"{cell.label} has no scorecard to test")
    # the headline questions, as every verdict (goldeval.golden.model.headline_split)
    return np.array([q.metrics.get(metric, 0.0) for q in card.retrievers[0].headline_questions], dtype=np.float64)


def _verdict(diff: float, ci: Sequence[float], p_holm: float, within: bool, confidence: float) -> str:
    low, high = sorted((ci[0] * 100, ci[1] * 100))
    stats = f"{round(confidence * 100)}% CI {low:+.1f} to {high:+.1f}, {format_p(p_holm)} after Holm"
    if within:
        return f"within noise of the best ({diff * 100:+.1f} points, {stats})"
    return f"worse than the best by {abs(diff) * 100:.1f} points ({stats})"


def pareto_fronts(cells: Sequence[CellResult], primary: Metric) -> dict[str, list[str]]:
    """Each cost axis -> the labels on its front; marks each configuration's `pareto` axes."""
    fronts = {}
    for axis in COST_AXES:
        fronts[axis] = pareto_front([(c.label, c.cost.value(axis), c.metrics.get(primary)) for c in cells])
    for c in cells:
        c.pareto = [axis for axis in COST_AXES if c.label in fronts[axis]]
    return fronts


def heatmaps(cells: Sequence[CellResult], primary: Metric, dials: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """For every two dials with several values where they apply: rows x columns of the best primary value
    at each pair.

    Values are in the order the grid gives them (`dials`), then None (the dial does not apply: bm25's model).
    """
    varying = varying_dials(cells, where_they_apply=True)
    maps = []
    for rows, cols in combinations(varying, 2):
        row_values = _ordered(cells, rows, dials.get(rows, ()))
        col_values = _ordered(cells, cols, dials.get(cols, ()))
        values: list[list[float | None]] = [[None] * len(col_values) for _ in row_values]
        labels: list[list[str | None]] = [[None] * len(col_values) for _ in row_values]
        within: list[list[bool | None]] = [[None] * len(col_values) for _ in row_values]
        for c in cells:  # best first: the first configuration to reach a square is its best
            i = row_values.index(c.cell.dials()[rows])
            j = col_values.index(c.cell.dials()[cols])
            if labels[i][j] is None and primary in c.metrics:
                values[i][j], labels[i][j] = c.metrics[primary], c.label
                within[i][j] = c.vs_best is None or c.vs_best.within_noise
        maps.append({"rows": rows, "cols": cols, "row_values": row_values, "col_values": col_values,
                     "metric": str(primary), "values": values, "labels": labels, "within_noise": within})
    return maps


def _ordered(cells: Sequence[CellResult], dial: str, given: Sequence[Any]) -> list[Any]:
    """The values of `dial` that some configuration has, in the grid's order, None last."""
    present = {repr(c.cell.dials()[dial]) for c in cells}
    out = [v for v in given if repr(v) in present]
    return out + ([None] if "None" in present and None not in out else [])
