"""Off-topic separability: score ranges, overlap, ROC AUC, the best threshold and its cost."""

from __future__ import annotations

import pytest
from sklearn.metrics import roc_auc_score

from goldset.report.scorecard import Hit, QuestionResult, RetrieverResult, Scorecard
from goldset.stats.offtopic import off_topic_report, separability


def _result(answerable: list[float], off_topic: list[float | None]) -> RetrieverResult:
    qs = [QuestionResult(f"a{i}", f"answerable {i}", {"d": 1}, False, 1, {"d": 1}, [Hit("d", s, "d")], {"hit@1": 1.0})
          for i, s in enumerate(answerable)]
    for i, s in enumerate(off_topic):
        top = [] if s is None else [Hit(f"doc{i}.md#2", s, f"doc{i}.md")]
        qs.append(QuestionResult(f"o{i}", f"off-topic {i}", {}, True, None, {}, top, {}))
    return RetrieverResult("dense:minilm", qs, {"hit@1": 1.0})


def test_separable_scores_get_a_threshold_that_costs_nothing() -> None:
    s = separability(_result([0.9, 0.8, 0.85, 0.7], [0.3, 0.5]))
    assert s["overlap"] is False and s["auc"] == 1.0
    assert s["threshold"] == pytest.approx(0.6)
    assert (s["rejects_answerable"], s["passes_off_topic"]) == (0, 0)
    assert s["answerable"] == {"min": 0.7, "median": pytest.approx(0.825), "max": 0.9}
    assert s["off_topic"] == {"min": 0.3, "median": 0.4, "max": 0.5}
    assert s["verdict"].startswith("separable: a threshold at 0.6 rejects all 2 off-topic questions")


def test_overlapping_scores_report_auc_best_threshold_cost_and_the_highest_off_topic() -> None:
    answerable, off = [0.9, 0.6, 0.4, 0.8], [0.5, 0.85, 0.2]
    s = separability(_result(answerable, off))
    labels = [1] * 4 + [0] * 3
    assert s["auc"] == pytest.approx(roc_auc_score(labels, answerable + off))  # 8/12 by hand
    assert s["auc"] == pytest.approx(8 / 12)
    assert s["overlap"] is True
    # total errors 2 at t in (0.2, 0.4) (0 rejected, 2 let through) and at (0.5, 0.6) (1 + 1):
    # the tie goes to fewer wrongly rejected answers
    assert s["threshold"] == pytest.approx(0.3)
    assert (s["rejects_answerable"], s["passes_off_topic"]) == (0, 2)
    assert s["highest"] == {"question_id": "o1", "question": "off-topic 1", "score": 0.85,
                            "passage": "doc1.md#2", "doc": "doc1.md"}
    assert s["verdict"].startswith("not separable (AUC 0.67)")


def test_off_topic_questions_with_no_results_are_counted_and_rejected() -> None:
    s = separability(_result([0.9, 0.8], [None, 0.1]))
    assert s["n_off_topic_empty"] == 1 and s["n_off_topic"] == 2
    assert "1 more off-topic question(s) returned no results" in s["verdict"]


def test_no_off_topic_questions_says_to_add_some() -> None:
    card = Scorecard([_result([0.5, 0.7], [])], ["hit@1"], [1], 10)
    report = off_topic_report(card)
    assert "not comparable across models" in report["note"]
    assert report["retrievers"]["dense:minilm"]["verdict"].startswith("no off-topic questions in the golden set")
