"""Metric names round-trip, and bad names fail with a hint."""

from __future__ import annotations

import pytest

from goldeval.errors import InputError
from goldeval.metrics.definitions import METRIC_NAMES, NEEDS_K, NO_K, Metric, default_metrics, parse_metric


@pytest.mark.parametrize("name", sorted(METRIC_NAMES))
def test_every_metric_round_trips(name: str) -> None:
    for k in ([None] if name in NO_K else [1, 10, 100] if name in NEEDS_K else [None, 5]):
        metric = Metric(name, k)
        assert parse_metric(str(metric)) == metric


def test_default_metrics_round_trip() -> None:
    for metric in default_metrics((1, 3, 20)):
        assert parse_metric(str(metric)) == metric


@pytest.mark.parametrize(
    ("text", "metric"),
    [("P@5", Metric("precision", 5)), ("success@1", Metric("hit", 1)), ("recip_rank", Metric("mrr")),
     (" NDCG @ 10 ", Metric("ndcg", 10)), ("MAP@100", Metric("map", 100)), ("R@20", Metric("recall", 20))],
)  # fmt: skip
def test_aliases_and_spelling(text: str, metric: Metric) -> None:
    assert parse_metric(text) == metric


@pytest.mark.parametrize(
    ("text", "message"),
    [("ndcg", "ndcg needs a cut-off"), ("recal@10", "unknown metric 'recal'"), ("hit@0", "cut-off must be at least 1"),
     ("rprec@5", "rprec takes no cut-off"), ("ndcg@ten", "cannot read metric"), ("", "cannot read metric")],
)  # fmt: skip
def test_bad_metric_names_raise_input_error_with_hint(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        parse_metric(text)
    assert info.value.hint
