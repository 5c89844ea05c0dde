"""annotate_scorecard end to end: intervals, extras keys, JSON round trip, renderers, the eval CLI flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from goldeval.cli import main
from goldeval.corpus.model import Corpus, Document
from goldeval.evaluation import evaluate
from goldeval.golden.model import GoldenSet, Question
from goldeval.report.markdown import scorecard_markdown
from goldeval.report.scorecard import Hit, QuestionResult, RetrieverResult, Scorecard
from goldeval.report.sections import render_stats
from goldeval.stats.annotate import annotate_scorecard
from goldeval.stats.compare import Comparison

TOPICS = ["json", "csv", "regex", "pathlib", "sqlite", "socket", "thread", "zipfile", "hashlib", "logging"]


def small_corpus() -> Corpus:
    docs = {f"{t}.md": Document(f"{t}.md", f"The {t} module. Use {t} for {t} work; examples of {t}.") for t in TOPICS}
    return Corpus(docs)


def small_golden() -> GoldenSet:
    qs = [Question(f"q{i}", f"{t} examples", {f"{t}.md": 1}, tags=("stdlib", "even" if i % 2 == 0 else "odd"),
                   source="hand" if i < 6 else "synthetic") for i, t in enumerate(TOPICS)]
    qs.append(Question("off1", "weather tomorrow in paris", {}))
    qs.append(Question("off2", "examples of recipes", {}))
    return GoldenSet(qs)


def half_right(question: str, k: int) -> list[tuple[str, float]]:
    topic = question.split()[0]
    if topic in TOPICS and TOPICS.index(topic) % 2 == 0:
        return [(f"{topic}.md", 0.9), ("csv.md", 0.2)]
    return [("json.md", 0.5), ("csv.md", 0.4)]


def test_evaluate_fills_intervals_and_every_stats_key() -> None:
    card = evaluate({"bm25": "bm25", "mine": half_right}, small_golden(), corpus=small_corpus(), k=(1, 5),
                    resamples=1000, seed=3)
    for r in card.retrievers:
        assert set(r.intervals) == set(card.metrics)
        for m, (low, high) in r.intervals.items():
            assert low <= r.metrics[m] <= high
    mine = card.retriever("mine")
    assert mine.metrics["hit@1"] == 0.5 and mine.intervals["hit@1"][0] < 0.5 < mine.intervals["hit@1"][1]
    assert {"stats", "comparison", "breakdown", "off_topic", "diagnosis_counts"} <= set(card.extras)
    assert card.extras["stats"]["seed"] == 3 and card.extras["stats"]["resamples"] == 1000
    comparison = Comparison.from_dict(card.extras["comparison"])
    assert comparison.systems == ["bm25", "mine"]
    assert comparison.get("hit@1", "mine", "bm25").losses == 5
    assert set(card.extras["breakdown"]["retrievers"]["mine"]["by_tag"]) == {"even", "odd", "stdlib"}
    assert card.extras["breakdown"]["retrievers"]["mine"]["by_tag"]["even"]["metrics"]["hit@1"] == 1.0
    assert sum(card.extras["diagnosis_counts"]["mine"].values()) == 4  # csv.md is at rank 2: a hit at k = 5


def test_stats_survive_the_json_round_trip_and_are_reproducible() -> None:
    card = evaluate({"bm25": "bm25", "mine": half_right}, small_golden(), corpus=small_corpus(), k=(1,),
                    resamples=500)
    again = Scorecard.from_dict(json.loads(json.dumps(card.to_dict())))
    assert again.extras["comparison"] == card.extras["comparison"]
    assert again.retriever("mine").intervals == card.retriever("mine").intervals
    assert again.retriever("mine").questions[1].diagnosis == card.retriever("mine").questions[1].diagnosis
    annotate_scorecard(again, resamples=500)
    assert again.extras["comparison"] == card.extras["comparison"]


def test_stats_false_leaves_the_scorecard_bare() -> None:
    card = evaluate(half_right, small_golden(), k=(1,), stats=False)
    assert card.extras == {} and card.retrievers[0].intervals == {}


def _sourced_card(n_hand: int, n_synthetic: int) -> Scorecard:
    qs = []
    for i in range(n_hand + n_synthetic):
        synthetic = i >= n_hand
        hit = 1.0 if synthetic or i % 2 else 0.0
        qs.append(QuestionResult(f"q{i}", "?", {"d": 1}, False, 1 if hit else None, {"d": 1 if hit else None},
                                 [Hit("d" if hit else "x", 1.0, "d" if hit else "x")], {"hit@5": hit},
                                 source="synthetic" if synthetic else "hand"))
    return Scorecard([RetrieverResult("bm25", qs, {"hit@5": sum(q.metrics["hit@5"] for q in qs) / len(qs)})],
                     ["hit@5"], [5], 100)


def test_synthetic_beating_hand_written_beyond_noise_is_flagged() -> None:
    card = _sourced_card(30, 30)
    annotate_scorecard(card, resamples=2000)
    (warning,) = card.extras["breakdown"]["warnings"]
    assert warning["hand"] == 0.5 and warning["synthetic"] == 1.0 and warning["ci"][0] > 0
    assert "flatter search; the hand-written number is the one to report" in warning["text"]
    assert card.extras["breakdown"]["mixed_sources"] is True
    by_source = card.extras["breakdown"]["retrievers"]["bm25"]["by_source"]
    assert (by_source["hand"]["n"], by_source["synthetic"]["n"]) == (30, 30)


def test_a_small_gap_between_sources_is_not_flagged() -> None:
    card = _sourced_card(4, 3)  # too few questions for the gap to be more than noise
    annotate_scorecard(card, resamples=2000)
    assert card.extras["breakdown"]["warnings"] == []


def test_renderers_show_verdicts_counts_and_details() -> None:
    card = evaluate({"bm25": "bm25", "mine": half_right}, small_golden(), corpus=small_corpus(), k=(1, 5),
                    resamples=500)
    console = Console(record=True, width=200)
    render_stats(card, console)
    text = console.export_text()
    assert "bm25 leads mine by 4 questions of 10 on hit@5" in text
    assert "mine: 4 miss(es)" in text and "Can a score threshold catch off-topic questions?" in text
    assert "By tag" not in text and "Hand-written vs synthetic" in text
    console = Console(record=True, width=200)
    render_stats(card, console, details=True)
    assert "By tag: hit@5" in console.export_text()
    md = scorecard_markdown(card)
    assert md.startswith("### goldeval scorecard\n\n| retriever | questions | hit@1 | hit@5 |")
    assert "bm25 leads mine by 4 questions of 10 on hit@5" in md
    assert "<details><summary>Every miss with its evidence</summary>" in md


def test_eval_cli_writes_markdown_and_accepts_seed_and_resamples(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for t in TOPICS:
        (folder / f"{t}.md").write_text(f"The {t} module, with examples of {t}.", encoding="utf-8")
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps({"id": f"q{i}", "question": f"{t} examples", "expected": [f"{t}.md"]}) + "\n"
                              for i, t in enumerate(TOPICS)), encoding="utf-8")
    md, out = tmp_path / "card.md", tmp_path / "card.json"
    code = main(["eval", "--corpus", str(folder), "--golden", str(golden), "--seed", "7", "--resamples", "300",
                 "--markdown", str(md), "--json", str(out), "--quiet"])
    assert code == 0
    assert md.read_text().startswith("### goldeval scorecard")
    assert json.loads(out.read_text())["stats"]["seed"] == 7
    assert main(["eval", "--corpus", str(folder), "--golden", str(golden), "--resamples", "0"]) == 2
    assert "--resamples must be at least 1" in capsys.readouterr().err
