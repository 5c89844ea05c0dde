"""`goldeval eval --retriever run:FILE` gives every question the values trec_eval gives the same run.

Two references from outside the evaluation path: trec_eval's own test vectors (`out.test.aq` is trec_eval
10.0's per-topic output on `qrels.test` and `results.test`, ../shared/data/trec_eval), and `goldeval trec -q`
(itself held byte for byte to those vectors by tests/test_metrics_trec_parity.py) on a random run with
tied and 17-digit scores, graded and judged-not-relevant documents, a question the run does not answer
and a question whose relevant documents were never retrieved. Issue 23 made eval's scoring path fast;
this is what holds its numbers still.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from goldeval.cli import main

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "trec_eval"
TREC_NAMES = {"success": "hit", "recall": "recall", "P": "precision", "ndcg_cut": "ndcg", "map_cut": "map"}
PLAIN = {"recip_rank": "mrr", "map": "map", "Rprec": "rprec", "bpref": "bpref"}
MEASURES = ["-m", "success.1,5,10", "-m", "recall.1,5,10", "-m", "P.1,5,10", "-m", "ndcg_cut.1,5,10",
            "-m", "map_cut.10", "-m", "recip_rank", "-m", "map", "-m", "Rprec", "-m", "bpref"]
EXTRA = ["--metric", "map@10", "--metric", "rprec", "--metric", "bpref"]


def golden_from_qrels(qrels: Path, out: Path, topics: set[str] | None = None) -> Path:
    """A JSONL golden set holding exactly the judgments of a TREC qrels file (grade > 0 expected, others judged 0)."""
    grades: dict[str, dict[str, int]] = {}
    for line in qrels.read_text().splitlines():
        topic, _, doc, grade = line.split()
        if topics is None or topic in topics:
            grades.setdefault(topic, {})[doc] = int(grade)
    with out.open("w") as handle:
        for topic, docs in grades.items():
            handle.write(json.dumps({"id": topic, "question": f"topic {topic}",
                                     "expected": {d: g for d, g in docs.items() if g > 0},
                                     "judgments": [{"doc": d, "grade": g} for d, g in docs.items() if g <= 0]}) + "\n")
    return out


def eval_values(tmp_path: Path, golden: Path, run: Path, depth: int) -> dict[str, dict[str, float]]:
    """Question id -> metric name -> value, from the results JSON of `goldeval eval` on the run file."""
    out = tmp_path / "results.json"
    code = main(["eval", "--golden", str(golden), "--retriever", f"run:{run}", "--no-stats", "--quiet",
                 "--depth", str(depth), *EXTRA, "--workspace", str(tmp_path / "ws"), "--json", str(out)])
    assert code == 0
    (retriever,) = json.loads(out.read_text())["retrievers"]
    return {q["id"]: q["metrics"] for q in retriever["questions"] if not q["off_topic"]}


def trec_table(lines: list[str]) -> dict[str, dict[str, float]]:
    """trec_eval's per-topic lines (`measure \\t topic \\t value`) -> topic -> goldeval metric name -> value."""
    out: dict[str, dict[str, float]] = {}
    for line in lines:
        measure, topic, value = (part.strip() for part in line.split("\t"))
        family, _, k = measure.rpartition("_")
        name = f"{TREC_NAMES[family]}@{k}" if family in TREC_NAMES and k.isdigit() else PLAIN.get(measure)
        if name is not None and topic != "all":
            out.setdefault(topic, {})[name] = float(value)
    return out


def assert_same(ours: dict[str, dict[str, float]], reference: dict[str, dict[str, float]], per_topic: int) -> None:
    """Every reference value equals ours to the 4 decimals trec_eval prints; `per_topic` values each."""
    assert set(reference) <= set(ours)
    for topic, values in reference.items():
        assert len(values) == per_topic, topic
        for name, value in values.items():
            assert f"{ours[topic][name]:.4f}" == f"{value:.4f}", (topic, name, ours[topic][name], value)


def test_eval_on_trec_evals_own_run_gives_out_test_aq_per_topic(tmp_path: Path) -> None:
    wanted = {"hit@1", "hit@5", "hit@10", "recall@10", "precision@5", "precision@10", "ndcg@10", "map@10", "mrr",
              "map", "rprec", "bpref"}  # fmt: skip
    reference = {t: {n: v for n, v in values.items() if n in wanted}
                 for t, values in trec_table((DATA / "out.test.aq").read_text().splitlines()).items()}
    golden = golden_from_qrels(DATA / "qrels.test", tmp_path / "golden.jsonl", set(reference))
    ours = eval_values(tmp_path, golden, DATA / "results.test", depth=1000)
    assert set(ours) == set(reference) == {"301", "302", "303"}
    assert_same(ours, reference, per_topic=len(wanted))


def random_files(tmp_path: Path, seed: int) -> tuple[Path, Path, Path]:
    """qrels, run and golden set: 60 questions x up to 50 results over 300 ids, ties, 17-digit scores."""
    rng = random.Random(seed)
    qrels_lines, run_lines = [], []
    for n in range(60):
        topic = f"t{n:02d}"
        docs = rng.sample([f"d{i:03d}" for i in range(300)], 60)
        for doc in docs[:rng.randint(1, 6)] + rng.sample(docs[45:], 3):  # some judged never retrieved
            qrels_lines.append(f"{topic} 0 {doc} {rng.choice([0, 0, 1, 2, 3])}\n")
        if n % 13 == 5:
            continue  # a question the run does not answer: every metric 0
        scores = [rng.choice([1.0, 0.5, 0.25]) if rng.random() < 0.3 else rng.random() * 10 for _ in range(45)]
        run_lines += [f"{topic} Q0 {d} {i} {s!r} run\n" for i, (d, s) in enumerate(zip(docs[:45], scores, strict=True), 1)]
    rng.shuffle(run_lines)  # trec_eval ranks by score, not by line order
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.trec"
    qrels.write_text("".join(qrels_lines))
    run.write_text("".join(run_lines))
    return qrels, run, golden_from_qrels(qrels, tmp_path / "golden.jsonl")


@pytest.mark.parametrize("seed", [1, 2])
def test_eval_on_a_run_file_equals_goldeval_trec_per_question(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              seed: int) -> None:  # fmt: skip
    qrels, run, golden = random_files(tmp_path, seed)
    assert main(["trec", "-q", *MEASURES, str(qrels), str(run)]) == 0
    reference = trec_table(capsys.readouterr().out.splitlines())
    ours = eval_values(tmp_path, golden, run, depth=100)
    assert_same(ours, reference, per_topic=17)
    unanswered = set(ours) - set(reference)  # trec_eval leaves out topics without results; eval scores them 0
    assert unanswered and all(v == 0.0 for t in unanswered for v in ours[t].values())
