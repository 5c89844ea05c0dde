"""Metric throughput: goldeval's engine beside pytrec_eval and ranx, on the same Python dicts, in one process.

Runs of 1k, 10k and 100k questions x 100 results (doc ids like `msmarco_doc_07_000123456`, scores
rounded to 4 decimals, 1-5 graded relevant documents per question, most of them retrieved, plus
judged non-relevant ones). Every tool computes the same five measures (nDCG@10, recall@100, P@10,
MRR, MAP) from the same `{question: {doc: score}}` / `{question: {doc: judgment}}` dicts:
- goldeval `evaluate_scores(qrels, run, metrics)`;
- pytrec_eval `RelevanceEvaluator(qrels, measures).evaluate(run)` (trec_eval's C code);
- ranx `evaluate(Qrels(qrels), Run(run), metrics)` (numba; compiled once before timing);
- a bare Python walk over every (doc, score) of the run, the floor for anything that reads the dicts.
Then `goldeval trec` on TREC files beside `pytrec_eval.parse_qrel/parse_run` + evaluate on the same
files. Prints questions/second and ratios (best of a few repeats); writes bench/results/metrics.json.
"""

from __future__ import annotations

import contextlib
import io
import platform
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench import write_results
from goldeval.cli import main as goldeval_main
from goldeval.metrics.compute import evaluate_scores
from goldeval.metrics.definitions import parse_metric

SIZES = (1_000, 10_000, 100_000)
TREC_SIZES = (1_000, 10_000)
N_RESULTS = 100
METRICS = ["ndcg@10", "recall@100", "precision@10", "mrr", "map"]
PYTREC = {"ndcg_cut.10", "recall.100", "P.10", "recip_rank", "map"}
RANX = ["ndcg@10", "recall@100", "precision@10", "mrr", "map"]
TREC_ARGS = ["-m", "ndcg_cut.10", "-m", "recall.100", "-m", "P.10", "-m", "recip_rank", "-m", "map"]

Dicts = tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]


def synthetic(n_questions: int, seed: int = 0) -> Dicts:
    """Qrels and a run as plain dicts, shaped like a real dense/BM25 run over a large collection."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, 10**9, size=(n_questions, N_RESULTS)).tolist()
    scores = np.round(rng.gamma(4.0, 3.0, size=(n_questions, N_RESULTS)), 4).tolist()
    n_rel = rng.integers(1, 6, size=n_questions).tolist()
    grades = rng.integers(1, 4, size=(n_questions, 5)).tolist()
    retrieved = (rng.random((n_questions, 5)) < 0.7).tolist()
    picks = rng.integers(0, N_RESULTS, size=(n_questions, 7)).tolist()
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(n_questions):
        docs = [f"msmarco_doc_{x % 60:02d}_{x:09d}" for x in ids[i]]
        qid = f"q{i:06d}"
        run[qid] = dict(zip(docs, scores[i], strict=True))
        judged = {docs[picks[i][5]]: 0, docs[picks[i][6]]: 0}
        for j in range(n_rel[i]):
            doc = docs[picks[i][j]] if retrieved[i][j] else f"msmarco_doc_99_{i:06d}{j}"
            judged[doc] = grades[i][j]
        qrels[qid] = judged
    return qrels, run


def best_of(repeats: int, fn: Callable[..., object], *args: object) -> float:
    """Shortest of `repeats` timings of fn(*args), in seconds (the least disturbed by other processes)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def run_goldeval(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, float]:
    values = evaluate_scores(qrels, run, [parse_metric(m) for m in METRICS])
    return {str(m): float(v.mean()) for m, v in values.items()}


def run_pytrec(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, float]:
    import pytrec_eval

    per_query = pytrec_eval.RelevanceEvaluator(qrels, PYTREC).evaluate(run)
    names = ["ndcg_cut_10", "recall_100", "P_10", "recip_rank", "map"]
    return {m: float(np.mean([v[n] for v in per_query.values()])) for m, n in zip(METRICS, names, strict=True)}


def run_ranx(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, float]:
    from ranx import Qrels, Run, evaluate

    scores = evaluate(Qrels(qrels), Run(run), RANX, make_comparable=True)
    return {m: float(scores[r]) for m, r in zip(METRICS, RANX, strict=True)}


def walk(_: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> None:
    for docs in run.values():
        for _doc, _score in docs.items():
            pass


def bench_dicts(sizes: tuple[int, ...] = SIZES) -> list[dict[str, float]]:
    run_ranx(*synthetic(50, seed=1))  # numba compiles here, not in the timing
    rows = []
    for n in sizes:
        qrels, run = synthetic(n)
        repeats = 3 if n < 100_000 else 2
        ours, ref = run_goldeval(qrels, run), run_pytrec(qrels, run)
        drift = max(abs(ours[m] - ref[m]) for m in METRICS)  # same numbers, or the timing means nothing
        row = {"questions": n, "max_abs_diff_vs_pytrec_eval": drift}
        for name, fn in (("goldeval", run_goldeval), ("pytrec_eval", run_pytrec), ("ranx", run_ranx), ("walk", walk)):
            row[f"{name}_qps"] = n / best_of(repeats, fn, qrels, run)
        row["goldeval_vs_pytrec_eval"] = row["goldeval_qps"] / row["pytrec_eval_qps"]
        row["goldeval_vs_ranx"] = row["goldeval_qps"] / row["ranx_qps"]
        rows.append(row)
        print_row(row)
    return rows


def write_trec(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], folder: Path) -> tuple[str, str]:
    qrels_path, run_path = folder / "qrels.txt", folder / "run.txt"
    with qrels_path.open("w") as out:
        out.writelines(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items())
    with run_path.open("w") as out:
        for q, docs in run.items():
            out.writelines(f"{q} Q0 {d} {rank} {s} bench\n" for rank, (d, s) in enumerate(docs.items(), 1))
    return str(qrels_path), str(run_path)


def trec_goldeval(qrels_path: str, run_path: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        assert goldeval_main(["trec", *TREC_ARGS, qrels_path, run_path]) == 0


def trec_pytrec(qrels_path: str, run_path: str) -> None:
    import pytrec_eval

    with open(qrels_path) as q, open(run_path) as r:
        qrels, run = pytrec_eval.parse_qrel(q), pytrec_eval.parse_run(r)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, PYTREC).evaluate(run)
    for name in ("ndcg_cut_10", "recall_100", "P_10", "recip_rank", "map"):
        pytrec_eval.compute_aggregated_measure(name, [v[name] for v in per_query.values()])


def bench_trec_files(sizes: tuple[int, ...] = TREC_SIZES) -> list[dict[str, float]]:
    rows = []
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            paths = write_trec(*synthetic(n, seed=2), Path(tmp))
            row: dict[str, float] = {"questions": n}
            row["goldeval_trec_qps"] = n / best_of(3, trec_goldeval, *paths)
            row["parse_plus_pytrec_eval_qps"] = n / best_of(3, trec_pytrec, *paths)
        row["ratio"] = row["goldeval_trec_qps"] / row["parse_plus_pytrec_eval_qps"]
        rows.append(row)
        print(f"{n:>9,}  goldeval trec {row['goldeval_trec_qps']:>10,.0f} q/s   parse + pytrec_eval "
              f"{row['parse_plus_pytrec_eval_qps']:>10,.0f} q/s   ratio {row['ratio']:.2f}x")  # fmt: skip
    return rows


def print_row(row: dict[str, float]) -> None:
    print(f"{int(row['questions']):>9,}  {row['goldeval_qps']:>11,.0f}  {row['pytrec_eval_qps']:>11,.0f}  "
          f"{row['ranx_qps']:>11,.0f}  {row['walk_qps']:>11,.0f}  {row['goldeval_vs_pytrec_eval']:>7.2f}x  "
          f"{row['goldeval_vs_ranx']:>7.2f}x  {row['max_abs_diff_vs_pytrec_eval']:.1e}", flush=True)  # fmt: skip


def main() -> None:
    print(f"Metrics: {', '.join(METRICS)} over {N_RESULTS} results per question; questions/second, best of 2-3.")
    print(f"{'questions':>9}  {'goldeval':>11}  {'pytrec_eval':>11}  {'ranx':>11}  {'dict walk':>11}  "
          f"{'vs pytrec':>8}  {'vs ranx':>8}  max|diff|")  # fmt: skip
    dicts = bench_dicts()
    print("\n`goldeval trec` on TREC files vs parsing the same files + pytrec_eval (same measures):")
    trec = bench_trec_files()
    results_path = write_results("metrics", {
        "machine": f"{platform.processor() or platform.machine()}, Python {platform.python_version()}",
        "metrics": METRICS, "results_per_question": N_RESULTS, "dicts": dicts, "trec_files": trec,
    })
    print(f"\nwrote {results_path}")


if __name__ == "__main__":
    main()
