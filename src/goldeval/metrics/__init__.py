"""Metrics: definitions (what) in `definitions`, the vectorised engine (how) in `compute`,
trec_eval's names and output format in `trec`."""

from goldeval._lazy import exports
from goldeval.metrics.definitions import Metric, default_metrics, headline_metrics, parse_metric

__all__ = ["Metric", "default_metrics", "headline_metrics", "parse_metric"]

# Public too, imported on first use (their modules are heavier or optional).
_LAZY = {
    "evaluate_ranked": "goldeval.metrics.compute",
    "evaluate_scores": "goldeval.metrics.compute",
    "evaluate_trec": "goldeval.metrics.trec",
    "parse_measures": "goldeval.metrics.trec",
    "read_qrels": "goldeval.trecio",
    "read_run": "goldeval.trecio",
}
__all__ += list(_LAZY)
__getattr__ = exports(__name__, _LAZY)
