"""The per-k curves and flips a scorecard carries, checked against pytrec_eval at every k and by hand.

The page looks these values up at every k from 1 to the depth, so every one of them must be what
trec_eval computes on the run that was actually retrieved, not only the few computed cut-offs.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import pytrec_eval

from golden_factory import make_golden
from goldeval import evaluate
from goldeval.golden.model import GoldenSet
from goldeval.metrics.definitions import Metric
from goldeval.scorecard import Scorecard

DEPTH = 12
PYTREC = {"hit": "success", "recall": "recall", "precision": "P", "ndcg": "ndcg_cut"}
"""Our curve name -> trec_eval's measure family (success_k is hit@k)."""


def random_case(seed: int) -> tuple[GoldenSet, dict[str, list[tuple[str, float]]]]:
    """Graded judgments with judged-non-relevant documents, runs shorter than the depth, an empty run,
    a topic judged all non-relevant and an off-topic question; scores all distinct (no tie rule involved)."""
    rng = random.Random(seed)
    docs = [f"d{i:02d}" for i in range(30)]
    rows = []
    runs: dict[str, list[tuple[str, float]]] = {}
    for i in range(14):
        judged = rng.sample(docs, rng.randint(1, 6))
        grades = {d: rng.choice([0, 1, 1, 2, 3]) for d in judged}
        if i == 0:
            grades = {d: 0 for d in judged}  # a TREC topic nobody found a relevant document for
        rows.append((f"q{i}", f"question {i}", grades))
        n = 0 if i == 1 else rng.randint(3, DEPTH + 4)  # q1 returns nothing; some return more than the depth
        ranked = rng.sample(docs, min(n, len(docs)))
        runs[f"question {i}"] = [(d, 100.0 - j - rng.random() / 2) for j, d in enumerate(ranked)]
    rows.append(("off", "nothing here", {}))
    runs["nothing here"] = [("d00", 9.0)]
    return make_golden(rows), runs


def pytrec_means(golden: GoldenSet, runs: dict[str, list[tuple[str, float]]], name: str) -> list[float]:
    """pytrec_eval's mean over answerable questions of `name` at k = 1..DEPTH, on the run cut to DEPTH."""
    ks = ",".join(str(k) for k in range(1, DEPTH + 1))
    answerable = [q for q in golden if not q.off_topic]
    qrels = {q.id: golden.grades(q.id) for q in answerable}
    run = {q.id: dict(runs[q.question][:DEPTH]) for q in answerable if runs[q.question]}
    family = PYTREC[name]
    per_q = pytrec_eval.RelevanceEvaluator(qrels, {f"{family}.{ks}"}).evaluate(run)
    # trec_eval leaves out a question with no results; goldeval scores it 0 (answerable, nothing found)
    return [sum(per_q.get(q.id, {}).get(f"{family}_{k}", 0.0) for q in answerable) / len(answerable)
            for k in range(1, DEPTH + 1)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_curves_equal_pytrec_eval_at_every_k_from_1_to_the_depth(seed: int) -> None:
    golden, runs = random_case(seed)
    card = evaluate(lambda question, k: runs[question][:k], golden, k=(1, 5, 10), depth=DEPTH)
    (result,) = card.retrievers
    assert card.depth == DEPTH and set(result.curves) == set(PYTREC)
    for name in PYTREC:
        assert len(result.curves[name]) == DEPTH
        assert result.curves[name] == pytest.approx(pytrec_means(golden, runs, name), abs=1e-12), name


@pytest.mark.parametrize("seed", [4, 5])
def test_curves_at_the_computed_ks_equal_the_scorecard_metrics(seed: int) -> None:
    golden, runs = random_case(seed)
    card = evaluate(lambda question, k: runs[question][:k], golden, k=(1, 3, 7), depth=DEPTH)
    (result,) = card.retrievers
    for name in PYTREC:
        for k in card.k:
            assert result.curves[name][k - 1] == pytest.approx(result.metrics[Metric(name, k)], abs=1e-12)


def test_curves_read_back_from_a_file_are_recomputed_from_the_ranks(tmp_path: Path) -> None:
    golden, runs = random_case(6)
    card = evaluate(lambda question, k: runs[question][:k], golden, k=(1, 5), depth=DEPTH)
    card.save(tmp_path / "r.json")
    loaded = Scorecard.load(tmp_path / "r.json")
    for name in PYTREC:
        assert loaded.retrievers[0].curves[name] == pytest.approx(pytrec_means(golden, runs, name), abs=1e-12)


def test_doc_level_curves_count_a_document_once_however_many_of_its_chunks_come() -> None:
    golden = make_golden([("q", "alpha", {"a.md": 1, "b.md": 1})])
    hits = ["a.md#0", "a.md#1", "x.md#0", "b.md#3", "a.md#2"]
    card = evaluate(lambda question, k: hits[:k], golden, k=(1,), depth=5)
    curves = card.retrievers[0].curves
    # documents in order: a (relevant), a again (not counted), x, b (relevant), a again
    assert curves["hit"] == [1, 1, 1, 1, 1]
    assert curves["recall"] == pytest.approx([1 / 2, 1 / 2, 1 / 2, 1, 1])
    assert curves["precision"] == pytest.approx([1, 1 / 2, 1 / 3, 2 / 4, 2 / 5])


def test_flips_count_the_questions_one_retriever_finds_and_the_other_misses_at_every_k() -> None:
    # the first relevant document's rank, by question: A finds q1 at 1, q2 at 3, misses q3; B finds q1 at
    # 2, misses q2, finds q3 at 1 and q4 at 4 (A finds q4 at 4 too)
    golden = make_golden([(f"q{i}", f"question {i}", {"good": 1}) for i in range(1, 5)] + [("off", "x", {})])
    ranks_a = {"question 1": 1, "question 2": 3, "question 3": None, "question 4": 4, "x": None}
    ranks_b = {"question 1": 2, "question 2": None, "question 3": 1, "question 4": 4, "x": None}

    def ranked(ranks: dict[str, int | None]):  # type: ignore[no-untyped-def]
        def search(question: str, k: int) -> list[str]:
            out = [f"bad{i}" for i in range(5)]
            if ranks[question] is not None:
                out[ranks[question] - 1] = "good"
            return out[:k]
        return search

    card = evaluate({"A": ranked(ranks_a), "B": ranked(ranks_b)}, golden, k=(1,), depth=5)
    # k=1: A has q1, B has q3; k=2: B adds q1; k=3: A adds q2; k=4: both add q4
    assert card.flips == {"A|B": {"a_only": [1, 0, 1, 1, 1], "b_only": [1, 1, 1, 1, 1]}}
    assert card.retriever("A").curves["hit"] == pytest.approx([1 / 4, 1 / 4, 2 / 4, 3 / 4, 3 / 4])
    assert card.retriever("B").curves["hit"] == pytest.approx([1 / 4, 2 / 4, 2 / 4, 3 / 4, 3 / 4])
