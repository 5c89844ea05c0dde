"""Metric names round-trip, bad names fail with a hint, and the headline metrics are chosen in one place."""

from __future__ import annotations

import pytest

from goldeval.errors import InputError
from goldeval.metrics.definitions import (
    METRIC_NAMES,
    NEEDS_K,
    NO_K,
    Metric,
    default_metrics,
    headline_metrics,
    parse_metric,
)


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
    [("ndcg", "ndcg needs a cut-off"), ("recal@10", "unknown metric 'recal'"), ("hit@0", "the cut-off of 'hit@0' must be between 1 and 10,000, got 0"),
     ("rprec@5", "rprec takes no cut-off"), ("ndcg@ten", "cannot read metric"), ("", "cannot read metric")],
)  # fmt: skip
def test_bad_metric_names_raise_input_error_with_hint(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        parse_metric(text)
    assert info.value.hint


def _names(metrics: list[Metric]) -> list[str]:
    return [str(m) for m in metrics]


@pytest.mark.parametrize(
    ("ks", "headline", "expected"),
    [((1, 5, 10), None, ["hit@5", "mrr", "ndcg@5"]),            # the default: about what a RAG prompt gets
     ((1, 3, 10), None, ["hit@10", "mrr", "ndcg@10"]),          # no k = 5 computed: the largest k
     ((1, 3, 10), "hit@3", ["hit@3", "mrr", "ndcg@3"]),          # --headline sets the k of the others too
     ((1, 5, 10), "mrr", ["mrr", "hit@5", "ndcg@5"]),            # a metric without k keeps the default k
     ((1, 5, 10), "recall@10", ["recall@10", "hit@10", "mrr", "ndcg@10"])],
)  # fmt: skip
def test_headline_metrics_come_from_one_rule(ks: tuple[int, ...], headline: str | None, expected: list[str]) -> None:
    metrics = default_metrics(ks)
    chosen = parse_metric(headline) if headline else None
    if chosen is not None and chosen not in metrics:
        metrics.append(chosen)  # evaluate() computes the headline metric when it was not among the defaults
    assert _names(headline_metrics(metrics, ks, chosen)) == expected


def test_headline_metrics_are_only_metrics_that_were_computed() -> None:
    computed = [Metric("hit", 3), Metric("recall", 10), Metric("map")]
    # hit@3 is the headline; ndcg@3 and mrr were not computed, so they are not offered
    assert _names(headline_metrics(computed, (3, 10), Metric("hit", 3))) == ["hit@3"]
    # none of hit@10, mrr, ndcg@10 computed: the first three metrics, rather than nothing
    assert _names(headline_metrics(computed, (3, 10))) == ["hit@3", "recall@10", "map"]
