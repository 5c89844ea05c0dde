"""Off-topic separability: score ranges, overlap, ROC AUC, the best threshold and its cost."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from goldeval.corpus import load_corpus
from goldeval.evaluation import evaluate
from goldeval.golden.io import load_golden
from goldeval.metrics.definitions import Metric
from goldeval.scorecard import Hit, QuestionResult, RetrieverResult, Scorecard
from goldeval.stats.offtopic import off_topic_report, rank_based, separability

HIT1 = Metric("hit", 1)
REPO = Path(__file__).resolve().parents[1]


def _result(answerable: list[float | None], off_topic: list[float | None], *, errored: int = 0) -> RetrieverResult:
    """None: the question returned nothing; `errored` off-topic and answerable questions whose retriever raised."""
    qs = [QuestionResult(f"a{i}", f"answerable {i}", {"d": 1}, False, 1, {"d": 1},
                         [] if s is None else [Hit("d", s, "d")], {HIT1: 1.0})
          for i, s in enumerate(answerable)]
    for i, s in enumerate(off_topic):
        top = [] if s is None else [Hit(f"doc{i}.md#2", s, f"doc{i}.md")]
        qs.append(QuestionResult(f"o{i}", f"off-topic {i}", {}, True, None, {}, top, {}))
    for i in range(errored):
        qs.append(QuestionResult(f"eo{i}", "?", {}, True, None, {}, [], {}, error="TimeoutError: timed out"))
        qs.append(QuestionResult(f"ea{i}", "?", {"d": 1}, False, None, {"d": None}, [], {HIT1: 0.0},
                                 error="TimeoutError: timed out"))
    return RetrieverResult("dense:minilm", qs, {HIT1: 1.0})


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
    # Youden's J per cut (off-topic rejected / 3 - answerable rejected / 4), by hand:
    # 0.3: 1/3 - 0 = 0.33; 0.45: 1/3 - 1/4; 0.55: 2/3 - 1/4 = 0.42; 0.7: 2/3 - 2/4; 0.875: 1 - 3/4
    assert s["threshold"] == pytest.approx(0.55)
    assert (s["rejects_answerable"], s["passes_off_topic"]) == (1, 1)
    assert s["youden_j"] == pytest.approx(2 / 3 - 1 / 4)
    assert s["highest"] == {"question_id": "o1", "question": "off-topic 1", "score": 0.85,
                            "passage": "doc1.md#2", "doc": "doc1.md"}
    assert s["verdict"].startswith("not separable (AUC 0.67)")


def test_roc_points_hold_every_cut_and_the_chosen_threshold_the_page_looks_up() -> None:
    answerable, off = [0.9, 0.6, 0.4, 0.8], [0.5, 0.85, 0.2]
    s = separability(_result(answerable, off))
    roc = s["roc"]
    # cuts, ascending: the lowest score, the midpoints between neighbouring scores, just above the highest
    assert roc["thresholds"][:-1] == pytest.approx([0.2, 0.3, 0.45, 0.55, 0.7, 0.825, 0.875])
    assert roc["thresholds"][-1] > 0.9
    # reject when top-1 < cut, counted by hand at each cut
    assert roc["rejects_answerable"] == [0, 0, 1, 1, 2, 3, 3, 4]
    assert roc["passes_off_topic"] == [3, 2, 2, 1, 1, 1, 0, 0]
    assert (roc["n_answerable"], roc["n_off_topic"]) == (4, 3)
    chosen = roc["thresholds"].index(s["threshold"])
    assert (roc["rejects_answerable"][chosen], roc["passes_off_topic"][chosen]) == (1, 1)
    # the area under these points is the AUC sklearn computes from the scores
    labels = [1] * 4 + [0] * 3
    assert float(np.trapezoid(roc["tpr"], roc["fpr"])) == pytest.approx(roc_auc_score(labels, answerable + off))


def test_off_topic_questions_with_no_results_are_counted_and_rejected() -> None:
    s = separability(_result([0.9, 0.8], [None, 0.1]))
    assert s["n_off_topic_empty"] == 1 and s["n_off_topic"] == 2
    assert "(1 of the off-topic questions returned no results at all)" in s["verdict"]


def test_no_off_topic_questions_says_to_add_some() -> None:
    card = Scorecard([_result([0.5, 0.7], [])], [HIT1], [1], 10, [HIT1])
    report = off_topic_report(card)
    assert "not comparable across models" in report["note"]
    assert report["retrievers"]["dense:minilm"]["verdict"].startswith("no off-topic questions in the golden set")


def test_best_threshold_is_not_reject_nothing_when_off_topic_questions_are_few() -> None:
    # regression: minimising total errors with 130 answerable vs 10 off-topic picked "reject nothing"
    # (0 of 130 wrongly rejected, 10 of 10 let through) even where a cut catches 8 of the 10.
    # J by hand: cut 0.55 rejects 30 answerable (0.2) and 8 off-topic (0.3): 8/10 - 30/130 = 0.57;
    # reject nothing: 0; cut 0.25: 0 - 30/130; cut 0.85: 8/10 - 130/130.
    s = separability(_result([0.8] * 100 + [0.2] * 30, [0.3] * 8 + [0.9] * 2))
    assert s["threshold"] == pytest.approx(0.55)
    assert (s["rejects_answerable"], s["passes_off_topic"]) == (30, 2)
    assert s["youden_j"] == pytest.approx(0.8 - 30 / 130)
    assert "wrongly rejects 30 of 130 answerable questions and lets 2 of 10 off-topic ones through" in s["verdict"]


def test_when_no_cut_beats_accepting_everything_no_threshold_is_offered() -> None:
    s = separability(_result([0.5, 0.6, 0.55], [0.7, 0.8]))
    assert s["threshold"] is None and s["youden_j"] == 0.0
    assert (s["rejects_answerable"], s["passes_off_topic"]) == (0, 2)
    assert "no threshold does better than accepting every question, which lets 2 of 2 off-topic ones through" \
        in s["verdict"]


RRF_CONFIG = {"spec": "hybrid:bm25+dense:minilm", "kind": "hybrid", "method": "rrf", "score": "rank"}


def test_an_rrf_hybrid_is_flagged_by_its_kind_not_by_counting_its_values() -> None:
    # issue 18: 15 distinct RRF values over 30 questions slipped past a sqrt(n) count
    values = [1 / (60 + a) + 1 / (60 + 1) for a in range(1, 16)]  # first in one part, rank 1..15 in the other
    assert len(set(values)) == 15
    result = _result(values[:12] * 2, values[12:] * 2)
    assert len(result.questions) == 30
    plain = separability(result)
    assert plain["rank_based"] is False  # a retriever that does not say it fuses ranks: a score
    result.config = dict(RRF_CONFIG)
    s = separability(result)
    assert s["rank_based"] is True and s["threshold"] is not None
    assert ("The top-1 score is a rank-based score (reciprocal rank fusion: 15 distinct values over 30 "
            "questions), not a confidence") in s["verdict"]


def test_few_distinct_values_alone_do_not_make_a_score_rank_based() -> None:
    # BM25 on short repeated questions ties a lot: still a score
    result = _result([2.5] * 8 + [1.5] * 8, [1.5] * 4)
    result.config = {"spec": "bm25", "kind": "bm25"}
    assert separability(result)["rank_based"] is False
    # a normalised-score fusion is a score too; a results file written before `score` was recorded is
    # read by its method
    assert not rank_based({"kind": "hybrid", "method": "norm", "score": "score"})
    assert rank_based({"kind": "hybrid", "method": "rrf"}) and not rank_based({"kind": "rerank", "method": "rrf"})


def test_errored_questions_are_left_out_not_counted_as_returning_nothing() -> None:
    # regression: an off-topic question whose retriever raised has no results, and was counted as
    # "returned no results", i.e. as caught by any threshold
    s = separability(_result([0.9, 0.8], [0.1], errored=2))
    assert (s["n_errors"], s["n_off_topic_empty"], s["n_answerable_empty"]) == (4, 0, 0)
    assert "(4 questions whose retriever errored left out)" in s["verdict"]
    assert "rejects all 1 off-topic question " in s["verdict"]
    only_errors = separability(_result([0.9, 0.8], [], errored=1))
    assert only_errors["verdict"].startswith("not enough scored questions")


def test_answerable_questions_that_returned_nothing_count_as_wrongly_rejected() -> None:
    # regression: they were dropped from the cost, which then understated the answers a threshold refuses
    s = separability(_result([0.9, 0.6, None, 0.4, 0.8], [0.5, 0.85, 0.2]))
    # as the overlapping case above plus one answerable question refused at every threshold:
    # cut 0.55 has J = 2/3 - 2/5, the best; it rejects 0.4 and the empty one
    assert s["threshold"] == pytest.approx(0.55)
    assert (s["rejects_answerable"], s["passes_off_topic"], s["n_answerable_empty"]) == (2, 1, 1)
    assert "wrongly rejects 2 of 5 answerable questions" in s["verdict"]


def test_no_off_topic_advice_is_shown_once_in_the_terminal_and_in_markdown() -> None:
    # regression: the advice was computed but both renderers returned early without showing it
    from rich.console import Console

    from goldeval.report.markdown import off_topic_lines
    from goldeval.report.sections import render_off_topic

    other = _result([0.4, 0.6], [])
    other.name = "bm25"
    report = off_topic_report(Scorecard([_result([0.5, 0.7], []), other], [HIT1], [1], 10, [HIT1]))
    console = Console(record=True, width=300)
    render_off_topic(report, console)
    printed = console.export_text()
    assert printed.count("No off-topic questions in the golden set: add questions the corpus does not cover") == 1
    markdown = "\n".join(off_topic_lines(report))
    assert markdown.count("No off-topic questions in the golden set") == 1


def test_every_rrf_hybrid_evaluated_is_flagged_and_read_back_so(tmp_path: Path) -> None:
    # the real path: goldeval's hybrid records what its scores are, the results file keeps it, and the
    # off-topic report (terminal, JSON, page) reads it from there
    golden = load_golden(REPO / "examples" / "data" / "golden_example.jsonl")
    assert golden.off_topic  # the example set has questions the corpus does not answer
    card = evaluate(["bm25", "hybrid:bm25+(bm25?b=1)", "hybrid:bm25+(bm25?b=1)?method=norm"], golden,
                    corpus=load_corpus(REPO / "examples" / "data" / "corpus"), k=(1, 5), workspace=tmp_path / "ws")
    card.save(tmp_path / "results.json")
    report = off_topic_report(Scorecard.load(tmp_path / "results.json"))["retrievers"]
    flagged = {name: s["rank_based"] for name, s in report.items()}
    assert flagged == {"bm25": False, "hybrid:bm25+(bm25?b=1)": True, "hybrid:bm25+(bm25?b=1)?method=norm": False}
    assert "rank-based score" in report["hybrid:bm25+(bm25?b=1)"]["verdict"]


def test_synthetic_answerable_questions_are_left_out_of_the_threshold_and_counted() -> None:
    # regression (issue 18): the headline is hand-written (and log, incident) questions; the synthetic ones,
    # beside it, used to pull the threshold: two low-scoring synthetic questions made the scores overlap
    result = _result([0.9, 0.8, 0.85, 0.7], [0.3, 0.5])
    result.questions += [QuestionResult(f"s{i}", f"synthetic {i}", {"d": 1}, False, 1, {"d": 1}, [Hit("d", s, "d")],
                                        {HIT1: 1.0}, source="synthetic") for i, s in enumerate([0.1, 0.2])]
    s = separability(result)
    # the four hand-written scores only, as in test_separable_scores_get_a_threshold_that_costs_nothing
    assert (s["n_answerable"], s["n_beside"], s["overlap"], s["auc"]) == (4, 2, False, 1.0)
    assert s["threshold"] == pytest.approx(0.6) and s["roc"]["n_answerable"] == 4
    assert s["answerable"] == {"min": 0.7, "median": pytest.approx(0.825), "max": 0.9}
    assert s["verdict"].startswith("separable: a threshold at 0.6 rejects all 2 off-topic questions")
    assert s["verdict"].endswith("(2 synthetic questions beside the headline left out)")
