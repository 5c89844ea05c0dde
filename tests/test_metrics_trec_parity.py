"""trec_eval parity on trec_eval's own test vectors (../shared/data/trec_eval, trec_eval 10.0).

out.test is `trec_eval qrels.test results.test`; out.test.aq is the same with `-a -q` (every measure,
per topic and averaged). We compare every line goldeval prints, through the CLI and through the API.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from goldeval.cli import main
from goldeval.metrics.compute import evaluate_ranked, evaluate_scores
from goldeval.metrics.definitions import Metric
from goldeval.metrics.trec import evaluate_trec, parse_measures, read_qrels, read_run
from goldeval.ranking import ranked

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "trec_eval"
QRELS = DATA / "qrels.test"
RESULTS = DATA / "results.test"
REQUIRED = ["num_q", "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "recip_rank", "P_5", "P_1000",
            "recall_10", "recall_1000", "ndcg_cut_10", "ndcg_cut_1000", "map_cut_10", "success_1", "success_10"]  # fmt: skip


def _table(path: Path) -> dict[tuple[str, str], str]:
    table = {}
    for line in path.read_text().splitlines():
        name, topic, value = (part.strip() for part in line.split("\t"))
        table[(name, topic)] = value
    return table


def _printed(capsys: pytest.CaptureFixture[str], argv: list[str]) -> list[str]:
    assert main(argv) == 0
    return capsys.readouterr().out.splitlines()


def test_default_measures_reproduce_out_test_byte_for_byte(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _printed(capsys, ["trec", str(QRELS), str(RESULTS)])
    assert lines == (DATA / "out.test").read_text().splitlines()


def test_every_measure_per_topic_matches_out_test_aq(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _printed(capsys, ["trec", "-q", "-m", "all_trec", str(QRELS), str(RESULTS)])
    ours = {(n.strip(), t): v for n, t, v in (line.split("\t") for line in lines)}
    reference = _table(DATA / "out.test.aq")
    assert len(ours) == len(lines)  # no line printed twice
    mismatched = {key: (reference.get(key), value) for key, value in ours.items() if reference.get(key) != value}
    assert mismatched == {}
    for name in REQUIRED:
        for topic in (["all"] if name == "num_q" else ["301", "302", "303", "all"]):
            assert (name, topic) in ours, (name, topic)
    assert len(ours) == len(reference) == 387  # every line of out.test.aq


def test_print_order_follows_trec_eval(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _printed(capsys, ["trec", "-q", "-m", "all_trec", str(QRELS), str(RESULTS)])
    ours = [tuple(p.strip() for p in line.split("\t")[:2]) for line in lines]
    reference = [key for key in _table(DATA / "out.test.aq") if key in set(ours)]
    assert ours == reference


def test_explicit_measures_and_cutoffs(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _printed(capsys, ["trec", "-m", "ndcg_cut.10", "-m", "P.10,5", "-m", "map", str(QRELS), str(RESULTS)])
    assert lines == [
        "map                   \tall\t0.1785",
        "P_5                   \tall\t0.2667",
        "P_10                  \tall\t0.3000",
        "ndcg_cut_10           \tall\t0.3016",
    ]


def test_python_api_matches_out_test_aq() -> None:
    reference = _table(DATA / "out.test.aq")
    qrels, (run, runid) = read_qrels(QRELS), read_run(RESULTS)
    report = evaluate_trec(qrels, run, parse_measures(["all_trec"]), runid=runid)
    assert report.topics == ["301", "302", "303"]
    for name, value in report.summary():
        assert reference[(name, "all")] == value, name
    # The engine's own metrics, from dicts of scores and from ranked lists, equal trec_eval's values.
    metrics = {Metric("map"): "map", Metric("rprec"): "Rprec", Metric("mrr"): "recip_rank",
               Metric("precision", 5): "P_5", Metric("precision", 200): "P_200",
               Metric("recall", 100): "recall_100", Metric("ndcg", 10): "ndcg_cut_10",
               Metric("ndcg", 1000): "ndcg_cut_1000", Metric("map", 30): "map_cut_30",
               Metric("hit", 1): "success_1", Metric("hit", 10): "success_10"}  # fmt: skip
    topics = ["301", "302", "303"]
    rankings = {q: [doc for doc, _ in ranked(run[q])] for q in topics}
    for values in (
        evaluate_scores(qrels, run, list(metrics), qids=topics),
        evaluate_ranked(qrels, rankings, list(metrics), qids=topics),
    ):
        for metric, trec_name in metrics.items():
            expected = [float(reference[(trec_name, q)]) for q in topics]
            np.testing.assert_allclose(values[metric], expected, atol=5e-5, err_msg=trec_name)
            assert f"{values[metric].mean():6.4f}" == reference[(trec_name, "all")]
