"""Metrics: definitions (what) in `definitions`, the vectorised engine (how) in `compute`,
trec_eval's names and output format in `trec`."""

from goldeval.metrics.definitions import Metric, default_metrics, headline_metrics, parse_metric

__all__ = ["Metric", "default_metrics", "headline_metrics", "parse_metric"]
