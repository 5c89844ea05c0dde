"""Re-scoring with incomplete judgments: bpref against pytrec_eval, judged@k, metric ranges, the scorecard."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from goldeval.corpus import load_corpus
from goldeval.errors import InputError
from goldeval.evaluation import evaluate
from goldeval.golden.io import load_golden
from goldeval.golden.model import Judgment
from goldeval.metrics.compute import evaluate_ranked, evaluate_scores
from goldeval.metrics.definitions import Metric, parse_metric
from goldeval.metrics.judge import judge_ranked, locate_ranked
from goldeval.metrics.judged import judged_curve, metric_ranges
from goldeval.ranking import ranked
from goldeval.report.markdown import scorecard_markdown
from goldeval.scorecard.model import Scorecard

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "examples" / "data" / "corpus"
GOLDEN = REPO / "examples" / "data" / "golden_example.jsonl"
BPREF = Metric("bpref")


def _random_case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Partial judgments (relevant, judged not relevant, negative), ties, empty runs, nothing relevant."""
    rng = random.Random(seed)
    pool = [f"d{j:03d}" for j in range(40)]
    qrels, run = {}, {}
    for i in range(120):
        judged = rng.sample(pool, rng.randint(1, 14))
        qrels[f"q{i}"] = {d: rng.choice([-1, 0, 0, 0, 1, 1, 2]) for d in judged}
        if i % 9 == 0:
            qrels[f"q{i}"] = {d: 0 for d in judged}
        docs = rng.sample(pool, 0 if i % 11 == 0 else rng.randint(1, 30))
        run[f"q{i}"] = {d: float(rng.randint(0, 4)) for d in docs}
    return qrels, run


def test_bpref_parses_and_round_trips() -> None:
    assert parse_metric("bpref") == BPREF and str(BPREF) == "bpref"
    with pytest.raises(InputError, match="bpref takes no cut-off"):
        parse_metric("bpref@10")


@pytest.mark.parametrize("seed", [0, 1])
def test_bpref_equals_pytrec_eval(seed: int) -> None:
    qrels, run = _random_case(seed)
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"bpref"}).evaluate(run)
    qids = list(qrels)
    from_scores = evaluate_scores(qrels, run, [BPREF, Metric("hit", 5)], qids=qids)[BPREF]
    lists = {q: [d for d, _ in ranked(docs)] for q, docs in run.items()}
    from_lists = evaluate_ranked(qrels, lists, [BPREF], qids=qids)[BPREF]
    checked = 0
    for i, qid in enumerate(qids):
        expected = reference[qid]["bpref"] if qid in reference else 0.0
        assert from_scores[i] == pytest.approx(expected, abs=1e-12), qid
        assert from_lists[i] == pytest.approx(expected, abs=1e-12), qid
        checked += qid in reference
    assert checked > 90


def test_judged_at_k_counts_judged_shares_by_hand() -> None:
    grades = {"q1": {"a": 1, "b": 0}, "q2": {"x": 2}}
    rankings = {"q1": ["a", "u1", "b", "u2"], "q2": ["u3"], "q3": []}
    curve = judged_curve(grades, rankings, ["q1", "q2", "q3"], 4)
    # q1: 1, 1/2, 2/3, 2/4; q2: 0 at every k (one result, unjudged); q3: nothing returned counts as judged
    assert curve == pytest.approx([(1 + 0 + 1) / 3, (0.5 + 0 + 1) / 3, (2 / 3 + 0 + 1) / 3, (0.5 + 0 + 1) / 3], abs=1e-6)


def test_judged_at_k_is_the_mean_of_each_questions_share_on_lists_of_every_length() -> None:
    # the definition, question by question in exact fractions, against the engine's sums
    from fractions import Fraction

    rng = random.Random(7)
    for depth in (1, 3, 10, 25):
        grades, rankings = {}, {}
        for i in range(60):
            qid = f"q{i}"
            top = [f"d{rng.randrange(40)}" for _ in range(rng.choice([0, 1, 2, depth - 1, depth, depth + 5, 30]))]
            rankings[qid] = list(dict.fromkeys(top))
            grades[qid] = {d: rng.choice([0, 1, 2]) for d in rankings[qid] if rng.random() < 0.35}
        qids = sorted(rankings)
        expected = []
        for k in range(1, depth + 1):
            total = Fraction(0)
            for qid in qids:
                top = rankings[qid][:k]
                total += Fraction(sum(d in grades[qid] for d in top), len(top)) if top else 1
            expected.append(float(total / len(qids)))
        assert judged_curve(grades, rankings, qids, depth) == pytest.approx(expected, abs=1e-6), depth


def test_ranges_equal_pytrec_eval_on_completed_judgments() -> None:
    # The range is the metric with every unjudged passage of the top k judged relevant, or not:
    # checked with pytrec_eval on judgments completed by hand, not with the code under test.
    grades = {"q1": {"d1": 1, "d4": 0}, "q2": {"d9": 2}}
    rankings = {"q1": ["u1", "d1", "u2", "d4", "u3", "u4"], "q2": ["u5", "u6", "d9"]}
    metrics = [Metric("precision", 3), Metric("mrr"), Metric("ndcg", 5), BPREF]
    ranges = metric_ranges(grades, rankings, ["q1", "q2"], metrics, pool_depth=5)
    run = {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in rankings.items()}

    def mean(qrels: dict[str, dict[str, int]], measure: str) -> float:
        request = {"P_3": "P.3", "ndcg_cut_5": "ndcg_cut.5"}.get(measure, measure)
        values = pytrec_eval.RelevanceEvaluator(qrels, {request}).evaluate(run)
        return sum(v[measure] for v in values.values()) / len(values)

    def completed(cut: int, grade: int) -> dict[str, dict[str, int]]:
        return {q: {**grades[q], **{d: grade for d in docs[:cut] if d not in grades[q]}} for q, docs in rankings.items()}

    for metric, measure, cut in [(Metric("precision", 3), "P_3", 3), (Metric("mrr"), "recip_rank", 5),
                                 (Metric("ndcg", 5), "ndcg_cut_5", 5)]:
        values = sorted([mean(completed(cut, 0), measure), mean(completed(cut, 1), measure)])
        assert ranges[metric] == pytest.approx(tuple(values), abs=1e-6), metric
    assert ranges[Metric("precision", 3)] == pytest.approx((1 / 3, 1.0), abs=1e-6)  # d1 and d9 in each top 3
    assert BPREF not in ranges  # judged-only: completing the judgments does not bound it


def test_no_bpref_range_because_completed_judgments_do_not_bracket_bpref() -> None:
    # issue 18: bpref 0.944 was shown with a "range" of 0.796 to 0.933. Completing the judgments gives
    # bpref values that need not bracket bpref itself: pytrec_eval, on this ranking, says so
    grades = {"q1": {"d1": 1, "d2": 0}}
    rankings = {"q1": ["u1", "d1", "d2", "u2"]}
    run = {"q1": {d: float(len(rankings["q1"]) - i) for i, d in enumerate(rankings["q1"])}}

    def bpref(qrels: dict[str, dict[str, int]]) -> float:
        return float(pytrec_eval.RelevanceEvaluator(qrels, {"bpref"}).evaluate(run)["q1"]["bpref"])

    point = bpref(grades)
    worst = bpref({"q1": {**grades["q1"], "u1": 0, "u2": 0}})
    best = bpref({"q1": {**grades["q1"], "u1": 1, "u2": 1}})
    assert (point, worst, best) == pytest.approx((1.0, 0.0, 2 / 3))  # the point lies above both "ends"
    assert metric_ranges(grades, rankings, ["q1"], [BPREF, Metric("mrr")], pool_depth=4).keys() == {Metric("mrr")}


def _golden_with_pooled_verdicts(tmp_path: Path) -> Path:
    path = tmp_path / "golden.jsonl"
    shutil.copy(GOLDEN, path)
    golden = load_golden(path)
    golden.qrels.add(Judgment("h01", "git/git-branch.md", 0, "ana", "2026-11-30T10:00:00+00:00", "pool p1"))
    golden.qrels.add(Judgment("h03", "git/git-reset.md", 1, "ana", "2026-11-30T10:01:00+00:00", "pool p1"))
    from goldeval.golden.io import write_golden_jsonl

    write_golden_jsonl(golden, path)
    return path


def test_scorecard_holds_judged_at_k_ranges_and_bpref(tmp_path: Path) -> None:
    corpus = load_corpus(CORPUS)
    plain = evaluate(["bm25"], load_golden(GOLDEN), corpus=corpus, k=(1, 5), workspace=tmp_path / "ws")
    assert BPREF not in plain.metrics  # nothing judged not relevant: bpref would say nothing new
    card = evaluate(["bm25"], load_golden(_golden_with_pooled_verdicts(tmp_path)), corpus=corpus, k=(1, 5),
                    workspace=tmp_path / "ws")
    assert BPREF in card.metrics
    (r,) = card.retrievers
    assert len(r.judged) == 5 and 0 < r.judged[4] < 1 and r.judged[0] >= r.judged[4]
    assert r.judged[4] > plain.retrievers[0].judged[4]  # two more judged passages in the top 5
    assert BPREF not in r.ranges  # judged-only: no range that would not contain it
    for metric, value in r.metrics.items():
        if metric == BPREF:
            continue
        low, high = r.ranges[metric]  # every other metric reads an unjudged passage as not relevant: the low end
        assert low == pytest.approx(value, abs=1e-6) and low - 1e-6 <= value <= high + 1e-6
    # with every unjudged first result relevant, hit@1 misses only where the first result is judged not relevant
    # (over the headline questions, as every range: the example set's synthetic h09 is beside them)
    first_not_relevant = sum(1 for q in r.headline_questions if q.top[0].doc in q.nonrelevant)
    assert first_not_relevant == 1
    assert r.ranges[Metric("hit", 1)][1] == pytest.approx(1 - first_not_relevant / len(r.headline_questions), abs=1e-6)
    saved = tmp_path / "results.json"
    card.save(saved)
    again = Scorecard.load(saved)
    assert again.retrievers[0].judged == r.judged and again.retrievers[0].ranges == r.ranges
    text = scorecard_markdown(again)
    assert "judged@5: `bm25`" in text and "if the unjudged were all not relevant / all relevant" in text


def test_a_range_whose_low_end_is_above_its_high_end_is_refused(tmp_path: Path) -> None:
    card = evaluate(["bm25"], load_golden(GOLDEN), corpus=load_corpus(CORPUS), k=(1, 5), workspace=tmp_path / "ws")
    data = card.to_dict()
    data["retrievers"][0]["ranges"]["hit@5"] = [0.9, 0.2]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"retrievers\[0\]\.ranges\.hit@5: low 0.9 is above high 0.2"):
        Scorecard.load(path)


@pytest.mark.parametrize("grade", [0, 1])
def test_judgments_added_where_the_lists_stand_are_the_judgments_located_again(grade: int) -> None:
    # `Located.adding` (the ranges' completions) against locating the lists again on qrels completed by hand
    rng = random.Random(grade)
    docs = [f"d{i}" for i in range(30)]
    grades = {f"q{i}": {d: rng.choice([-1, 0, 1, 2]) for d in rng.sample(docs, rng.randint(0, 6))} for i in range(40)}
    rankings = {q: rng.sample(docs, rng.choice([0, 5, 12])) for q in grades}
    qids = list(grades)
    at = [(i, rank, d) for i, q in enumerate(qids) for rank, d in enumerate(rankings[q][:8], 1) if d not in grades[q]]
    added = locate_ranked(grades, rankings, qids).adding(np.array([i for i, _, _ in at], dtype=np.int64),
                                                         np.array([r for _, r, _ in at], dtype=np.int64), grade)
    completed = {q: dict(grades[q]) for q in qids}
    for i, _, d in at:
        completed[qids[i]][d] = grade
    again = judge_ranked(completed, rankings, qids)
    for name in ("num_ret", "num_rel", "num_nonrel", "q", "rank", "rel", "ideal_q", "ideal_gain", "ideal_pos"):
        assert getattr(added, name).tolist() == getattr(again, name).tolist(), name
    judged_before = sum(g >= 0 for q in qids for g in grades[q].values())
    assert len(at) > 20 and added.num_rel.sum() + added.num_nonrel.sum() == judged_before + len(at)


def test_a_scorecards_ranges_are_its_rankings_completed_and_judged_from_scratch(tmp_path: Path) -> None:
    # the scorecard sums its scored values for the low end (`ranges_from`'s `low`, issue 23): the same numbers as
    # completing the judgments with every unjudged passage judged not relevant and scoring them again
    from golden_factory import make_golden

    rng = random.Random(23)
    docs = [f"d{j}" for j in range(40)]
    rows, lines, rankings = [], [], {}
    for i in range(150):
        grades = {} if i % 10 == 0 else {d: rng.choice([-1, 0, 1, 2, 3]) for d in rng.sample(docs, rng.randint(1, 7))}
        rows.append((f"q{i}", f"question {i}", grades, (), "synthetic" if i % 7 == 0 else "hand"))  # off-topic, beside
        rankings[f"q{i}"] = rng.sample(docs, rng.choice([0, 3, 12, 25]))
        lines += [f"q{i} Q0 {d} {r} {100 - r} t" for r, d in enumerate(rankings[f"q{i}"], 1)]
    run = tmp_path / "run.trec"
    run.write_text("\n".join(lines) + "\n")
    golden = make_golden(rows)
    metrics = ["hit@1", "recall@5", "precision@5", "ndcg@10", "mrr", "map", "bpref"]
    (r,) = evaluate([f"run:{run}"], golden, k=(1, 5, 10), metrics=metrics, depth=25).retrievers
    headline = [q.id for q in r.headline_questions]
    assert 0 < len(headline) < 150 and r.ranges
    grades = {q.id: golden.grades(q.id) for q in golden}
    assert r.ranges == metric_ranges(grades, rankings, headline, [parse_metric(m) for m in metrics], pool_depth=10)
