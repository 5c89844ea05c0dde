"""The metric engine on cases worked out by hand from the definitions (trec_eval's m_*.c)."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from fast_paths import C_READER, use_c_reader
from goldeval.errors import InputError
from goldeval.metrics.compute import evaluate_ranked, evaluate_scores
from goldeval.metrics.definitions import Metric, parse_metric


@pytest.fixture(autouse=True, params=C_READER, ids=["c reader", "python reader"])
def _reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    use_c_reader(request.param, monkeypatch)  # every case both ways


def _one(values: dict[Metric, np.ndarray], text: str, i: int = 0) -> float:
    return float(values[parse_metric(text)][i])


def test_duplicate_ids_in_a_ranked_list_count_once() -> None:
    qrels = {"q": {"a": 1, "b": 1}}
    metrics = [parse_metric(m) for m in ("precision@3", "recall@3", "map", "ndcg@3", "hit@1", "mrr")]
    values = evaluate_ranked(qrels, {"q": ["a", "a", "b"]}, metrics)
    assert _one(values, "precision@3") == pytest.approx(2 / 3)  # the repeated "a" is not relevant twice
    assert _one(values, "recall@3") == 1.0
    assert _one(values, "map") == pytest.approx((1 / 1 + 2 / 3) / 2)  # "b" sits at rank 3, not 2
    ideal = 1 + 1 / math.log2(3)
    assert _one(values, "ndcg@3") == pytest.approx((1 + 1 / math.log2(4)) / ideal)
    assert _one(values, "hit@1") == 1.0 and _one(values, "mrr") == 1.0


def test_tied_scores_rank_by_id_descending_like_trec_eval() -> None:
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0, "z": 0.5}}
    values = evaluate_scores(qrels, run, [Metric("mrr"), Metric("hit", 2)])
    assert _one(values, "mrr") == pytest.approx(1 / 3)  # order: c, b, a, z
    assert _one(values, "hit@2") == 0.0


def test_graded_gains_ignore_zero_and_negative_judgments() -> None:
    qrels = {"q": {"a": 2, "b": -1, "c": 0, "d": 1}}
    values = evaluate_ranked(qrels, {"q": ["b", "c", "a"]}, [Metric("ndcg", 3), Metric("recall", 3), Metric("rprec")])
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert _one(values, "ndcg@3") == pytest.approx((2 / math.log2(4)) / ideal)
    assert _one(values, "recall@3") == pytest.approx(1 / 2)  # R = 2: only a and d are relevant
    assert _one(values, "rprec") == 0.0  # nothing relevant in the top R = 2


def test_precision_divides_by_k_even_for_short_lists() -> None:
    values = evaluate_ranked({"q": {"a": 1}}, {"q": ["a"]}, [Metric("precision", 10), Metric("map", 10)])
    assert _one(values, "precision@10") == pytest.approx(0.1)
    assert _one(values, "map@10") == 1.0


def test_cutoffs_apply_to_mrr_and_map() -> None:
    qrels = {"q": {"c": 1, "e": 1}}
    ranking = {"q": ["a", "b", "c", "d", "e"]}
    values = evaluate_ranked(qrels, ranking, [Metric("mrr", 2), Metric("mrr", 3), Metric("map", 3), Metric("map")])
    assert _one(values, "mrr@2") == 0.0
    assert _one(values, "mrr@3") == pytest.approx(1 / 3)
    assert _one(values, "map@3") == pytest.approx((1 / 3) / 2)
    assert _one(values, "map") == pytest.approx((1 / 3 + 2 / 5) / 2)


def test_every_question_gets_a_value_aligned_with_qids() -> None:
    qrels = {"answered": {"a": 1}, "nothing-relevant": {"a": 0}, "no-results": {"a": 1}, "off-topic": {}}
    run = {"answered": {"x": 2.0, "a": 1.0}, "nothing-relevant": {"a": 1.0}, "not-asked": {"a": 1.0}}
    values = evaluate_scores(qrels, run, [Metric("mrr"), Metric("ndcg", 5)])
    assert values[Metric("mrr")].tolist() == [0.5, 0.0, 0.0, 0.0]
    order = ["off-topic", "answered", "unknown"]
    values = evaluate_scores(qrels, run, [Metric("mrr")], qids=order)
    assert values[Metric("mrr")].tolist() == [0.0, 0.5, 0.0]
    assert values[Metric("mrr")].dtype == np.float64


def test_inputs_are_not_mutated() -> None:
    qrels = {"q": {"a": 2, "b": 0}}
    run = {"q": {"b": 1.0, "a": 1.0}}
    before = copy.deepcopy((qrels, run))
    evaluate_scores(qrels, run, [Metric("ndcg", 10)])
    assert (qrels, run) == before


def test_nan_score_is_an_input_error() -> None:
    with pytest.raises(InputError, match="question 'q': document 'a' has score NaN"):
        evaluate_scores({"q": {"a": 1}}, {"q": {"a": float("nan"), "b": 1.0}}, [Metric("mrr")])


def test_nan_score_names_the_right_document_among_several() -> None:
    # The ids are read once at the look-up (issue 23); the error reads the NaN one's id back by position.
    qrels = {"p": {"z": 1}, "q": {"x": 1, "y": 0, "a": 2}}
    run = {"p": {"z": 1.0}, "q": {"a": float("nan"), "b": 1.0}}
    with pytest.raises(InputError, match="question 'q': document 'a' has score NaN"):
        evaluate_scores(qrels, run, [Metric("mrr")])


def test_nan_score_of_an_unjudged_document_is_an_input_error() -> None:
    # A list holding a judgment to locate is read whole (issue 23), so a NaN anywhere in it is refused,
    # even when the judged document is not in it: the list cannot be ranked.
    with pytest.raises(InputError, match="question 'q': document 'b' has score NaN"):
        evaluate_scores({"q": {"a": 1}}, {"q": {"c": 2.0, "b": float("nan")}}, [Metric("mrr")])


@pytest.mark.parametrize("lengths", [(3, 3, 3, 3), (1, 9, 2, 30)])  # one padded block; lists one after the other
def test_nan_score_in_a_later_chunk_names_its_question(lengths: tuple[int, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    from goldeval.metrics import judge

    monkeypatch.setattr(judge, "READ_CELLS", 2)  # a chunk per list
    run = {f"q{i}": {f"d{j}": float(j) for j in range(n)} for i, n in enumerate(lengths)}
    run["q2"]["d1"] = float("nan")
    qrels = {q: {"d0": 1} for q in run}
    with pytest.raises(InputError, match="question 'q2': document 'd1' has score NaN"):
        evaluate_scores(qrels, run, [Metric("mrr")])


def test_long_uneven_rows_rank_correctly() -> None:
    # Rows of very different lengths are padded chunk by chunk; ranks must not leak across rows.
    qrels = {f"q{i}": {f"d{i}-0": 1} for i in range(50)}
    run = {f"q{i}": {f"d{i}-{j}": float(-j) for j in range(1 + 40 * (i % 7))} for i in range(50)}
    run["q3"] = {f"d3-{j}": float(j) for j in range(121)}  # the relevant doc is last of 121
    values = evaluate_scores(qrels, run, [Metric("mrr")])
    expected = [1.0] * 50
    expected[3] = 1 / 121
    np.testing.assert_allclose(values[Metric("mrr")], expected)


def test_empty_inputs_give_empty_arrays() -> None:
    values = evaluate_scores({}, {}, [Metric("mrr"), Metric("ndcg", 10)])
    assert values[Metric("mrr")].shape == (0,) and values[Metric("ndcg", 10)].shape == (0,)


def test_duplicate_ids_count_once_with_many_judgments() -> None:
    # More than 8 judgments takes the position-map path; the first occurrence must still win.
    qrels = {"q": {f"d{i}": 1 for i in range(10)}}
    values = evaluate_ranked(qrels, {"q": ["x", "d3", "d3", "d5"]}, [Metric("map"), Metric("precision", 4)])
    assert _one(values, "map") == pytest.approx((1 / 2 + 2 / 4) / 10)
    assert _one(values, "precision@4") == pytest.approx(2 / 4)
