"""pytrec_eval parity on random runs: many tied scores, graded judgments (some negative), empty runs,
questions with nothing relevant, lists of varying length. pytrec_eval embeds trec_eval's C code, so
it is an independent reference for every value."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from fast_paths import C_READER, use_c_reader
from goldeval.metrics import judge
from goldeval.metrics.compute import evaluate_ranked, evaluate_scores
from goldeval.metrics.definitions import Metric
from goldeval.metrics.ranks import pads_little
from goldeval.metrics.trec import evaluate_trec, parse_measures, read_qrels, read_run
from goldeval.ranking import ranked

KS = (1, 3, 5, 10, 20)
TREC_NAME = {"hit": "success", "recall": "recall", "precision": "P", "ndcg": "ndcg_cut", "map": "map_cut"}


def _random_case(seed: int, *, ties: bool) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = random.Random(seed)
    pool = [f"doc-{j:03d}" for j in range(40)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(150):
        qid = f"q{i}"
        judged = rng.sample(pool, rng.randint(1, 15))
        qrels[qid] = {d: rng.choice([-1, 0, 0, 1, 1, 2, 3]) for d in judged}
        if i % 10 == 0:
            qrels[qid] = {d: 0 for d in judged}  # nothing relevant
        n = 0 if i % 13 == 0 else rng.randint(1, 35)  # some empty runs, lengths vary
        docs = rng.sample(pool, n)
        run[qid] = {d: float(rng.randint(0, 3)) if ties else rng.uniform(-5, 5) for d in docs}
    run["only-in-run"] = {"doc-001": 1.0}
    return qrels, run


def _metrics() -> list[Metric]:
    out = [Metric(name, k) for name in ("hit", "recall", "precision", "ndcg", "map") for k in KS]
    return out + [Metric("mrr"), Metric("map"), Metric("rprec"), Metric("mrr", 3), Metric("mrr", 10)]


def _reference(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    ks = ",".join(map(str, KS))
    measures = {f"{name}.{ks}" for name in TREC_NAME.values()} | {"recip_rank", "map", "Rprec"}
    return dict(pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run))


def _expected(metric: Metric, values: dict[str, float]) -> float:
    if metric.name == "mrr":
        rr = values["recip_rank"]
        # mrr@k from trec_eval's recip_rank: the first relevant rank is 1/rr; inside the top k or not.
        return rr if metric.k is None or (rr > 0 and round(1 / rr) <= metric.k) else 0.0
    if metric.name == "rprec":
        return values["Rprec"]
    if metric.name == "map" and metric.k is None:
        return values["map"]
    return values[f"{TREC_NAME[metric.name]}_{metric.k}"]


@pytest.mark.parametrize("c_reader", C_READER)
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ties", [True, False])
def test_engine_equals_pytrec_eval(seed: int, ties: bool, c_reader: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    use_c_reader(c_reader, monkeypatch)
    qrels, run = _random_case(seed, ties=ties)
    reference = _reference(qrels, run)
    qids = list(qrels)
    metrics = _metrics()
    rankings = {q: [doc for doc, _ in ranked(docs)] for q, docs in run.items()}
    from_scores = evaluate_scores(qrels, run, metrics, qids=qids)
    from_lists = evaluate_ranked(qrels, rankings, metrics, qids=qids)
    compared = 0
    for metric in metrics:
        for i, qid in enumerate(qids):
            if qid not in reference:  # pytrec_eval leaves out questions with no results
                assert not run[qid]
                assert from_scores[metric][i] == 0.0 and from_lists[metric][i] == 0.0
                continue
            expected = _expected(metric, reference[qid])
            assert from_scores[metric][i] == pytest.approx(expected, abs=1e-12), (metric, qid)
            assert from_lists[metric][i] == pytest.approx(expected, abs=1e-12), (metric, qid)
            compared += 1
    assert compared > 100 * len(metrics)


def _top_k_case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Every question's top 30, as a retriever gives them, a few lists shorter or empty; scores with
    many ties and -inf among them (the dict reader lays such lists out as one block padded with -inf)."""
    rng = random.Random(seed)
    pool = [f"doc-{j:03d}" for j in range(60)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(120):
        qid = f"q{i}"
        qrels[qid] = {d: rng.choice([-1, 0, 1, 1, 2, 3]) for d in rng.sample(pool, rng.randint(1, 12))}
        n = 30 if i % 9 else rng.choice([0, 1, 29])
        run[qid] = {d: rng.choice([-math.inf, 0.5, 1.0, 1.0, 2.0, 3.5]) for d in rng.sample(pool, n)}
    return qrels, run


def _read_lengths(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> np.ndarray:
    """The lengths of the lists the dict reader reads: those of questions with a relevant judgment."""
    return np.array([len(run.get(q, {})) for q, marks in qrels.items() if max(marks.values()) >= 1])


@pytest.mark.parametrize("read_cells", [judge.READ_CELLS, 1, 45])  # 1: a chunk per list
@pytest.mark.parametrize("case", ["top k (one padded block)", "ragged (lists one after the other)"])
def test_dicts_read_in_chunks_equal_pytrec_eval(read_cells: int, case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 23: the reader reads the lists' scores a chunk at a time, just before looking up the chunk's
    # judged ids; every layout and chunk boundary must give trec_eval's numbers. (The Python reader's: the C
    # reader reads a list at a time.)
    use_c_reader(False, monkeypatch)
    monkeypatch.setattr(judge, "READ_CELLS", read_cells)
    qrels, run = _top_k_case(3) if case.startswith("top k") else _random_case(3, ties=True)
    assert pads_little(_read_lengths(qrels, run)) == case.startswith("top k")
    reference = _reference(qrels, run)
    qids, metrics = list(qrels), _metrics()
    values = evaluate_scores(qrels, run, metrics, qids=qids)
    compared = 0
    for metric in metrics:
        for i, qid in enumerate(qids):
            expected = _expected(metric, reference[qid]) if qid in reference else 0.0
            assert values[metric][i] == pytest.approx(expected, abs=1e-12), (metric, qid)
            compared += qid in reference
    assert compared > 100 * len(metrics)


TREC_MEASURES = ["num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank", "P", "recall",
                 "Rprec_mult", "ndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P", "set_relative_P",
                 "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "iprec_at_recall", "utility", "infAP", "binG", "G", "ndcg_rel", "Rndcg"]  # fmt: skip


def _v9_cut(point: float, num_rel: float) -> int:
    return int(point * num_rel + 0.9)


@pytest.mark.parametrize("c_reader", C_READER)
@pytest.mark.parametrize("case", ["ties", "no ties", "top k"])
def test_trec_measures_equal_pytrec_eval(case: str, c_reader: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    use_c_reader(c_reader, monkeypatch)
    # "top k": every judgment located (bpref and others need them), many per list: the dict reader's
    # padded block is sorted row by row rather than compared
    qrels, run = _top_k_case(7) if case == "top k" else _random_case(7, ties=case == "ties")
    run = {q: docs for q, docs in run.items() if docs}
    reference = _reference_all(qrels, run)
    report = evaluate_trec(qrels, run, parse_measures(TREC_MEASURES))
    assert report.topics == sorted(reference)
    names = {name for name, _, _ in report.rows}
    assert {"bpref", "iprec_at_recall_0.50", "Rprec_mult_1.20", "set_F", "relative_P_5"} <= names
    for name, _, values in report.rows:
        for t, topic in enumerate(report.topics):
            if name.startswith("iprec_at_recall_"):
                # pytrec_eval embeds trec_eval 9, which turned a recall point into a rank with
                # (long)(p * R + 0.9); trec_eval 10 (our reference, out.test) uses lround(p * R).
                point, num_rel = float(name.rsplit("_", 1)[1]), reference[topic]["num_rel"]
                if _v9_cut(point, num_rel) != int(np.floor(point * num_rel + 0.5)):
                    continue
            assert values[t] == pytest.approx(reference[topic][name], abs=1e-12), (name, topic)


def _reference_all(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    return dict(pytrec_eval.RelevanceEvaluator(qrels, set(TREC_MEASURES)).evaluate(run))


def test_graded_trec_vectors_equal_pytrec_eval() -> None:
    # trec_eval's own graded qrels (levels -1..4) with its test run: real data, real ties.
    data = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "trec_eval"
    qrels, (run, _) = read_qrels(data / "qrels.rel_level"), read_run(data / "results.test")
    assert {v for docs in qrels.values() for v in docs.values()} == {-1, 0, 1, 2, 3, 4}
    reference = _reference_all(qrels, run)
    report = evaluate_trec(qrels, run, parse_measures(TREC_MEASURES))
    checked = 0
    for name, _, values in report.rows:
        if name.startswith("iprec_at_recall_"):
            continue  # trec_eval 9 vs 10 rounding of recall points, see test_trec_measures_equal_pytrec_eval
        for t, topic in enumerate(report.topics):
            assert values[t] == pytest.approx(reference[topic][name], abs=1e-12), (name, topic)
            checked += 1
    assert checked > 200
    metrics = [Metric("ndcg", 10), Metric("ndcg", 100), Metric("map"), Metric("rprec"), Metric("mrr")]
    values = evaluate_scores(qrels, run, metrics, qids=report.topics)
    names = {Metric("ndcg", 10): "ndcg_cut_10", Metric("ndcg", 100): "ndcg_cut_100", Metric("map"): "map",
             Metric("rprec"): "Rprec", Metric("mrr"): "recip_rank"}  # fmt: skip
    for metric, name in names.items():
        expected = [reference[t][name] for t in report.topics]
        np.testing.assert_allclose(values[metric], expected, rtol=0, atol=1e-12)
