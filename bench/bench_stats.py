"""Comparison speed: goldeval's vectorised stats beside ranx's `compare`, in one process.

The workload of issue 4: 5 systems x 6 metrics x 1,000 questions. goldeval computes, for every pair and
metric, the paired-bootstrap interval (10,000 resamples) and the paired test (exact McNemar for hit@k and
precision@1, 10,000 randomization rounds otherwise), plus Holm. ranx's `compare` runs its Fisher
randomization test with 1,000 rounds (its default), and computes no interval. Both start from the same
qrels and runs as Python dicts and include computing the per-question metrics.

ranx compiles with numba on its first call; its time is reported cold (first call, compilation
included) and warm (a second identical call). Wall-clock seconds are reported, and for goldeval also
the process CPU seconds (on a shared, loaded machine wall time overstates the cost). Prints the
timings and ratios and writes bench/results/stats.json.
"""

from __future__ import annotations

import random
import time

from bench import write_results
from goldeval.metrics.compute import evaluate_scores
from goldeval.metrics.definitions import parse_metric
from goldeval.stats.compare import compare_values

N_QUESTIONS = 1_000
N_SYSTEMS = 5
N_DOCS = 100
OURS = ["hit@1", "hit@5", "precision@1", "mrr", "ndcg@10", "recall@10"]
RANX = ["hit_rate@1", "hit_rate@5", "precision@1", "mrr", "ndcg@10", "recall@10"]


def workload(seed: int = 0) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, dict[str, float]]]]:
    rnd = random.Random(seed)
    qrels = {f"q{i}": {f"d{rnd.randrange(500)}": 1 for _ in range(rnd.randint(1, 3))} for i in range(N_QUESTIONS)}
    runs = {}
    for s in range(N_SYSTEMS):
        run = {}
        for qid, rel in qrels.items():
            docs = {f"d{rnd.randrange(500)}": rnd.random() for _ in range(N_DOCS)}
            for doc in rel:  # better systems put relevant documents higher more often
                if rnd.random() < 0.3 + 0.05 * s:
                    docs[doc] = 1.0 + rnd.random()
            run[qid] = docs
        runs[f"system{s}"] = run
    return qrels, runs


def time_goldeval(qrels: dict, runs: dict, resamples: int) -> tuple[float, float, float]:
    """Wall seconds in all, wall seconds of the statistics alone, CPU seconds of the statistics alone."""
    metrics = [parse_metric(m) for m in OURS]
    started = time.perf_counter()
    values = {name: evaluate_scores(qrels, run, metrics) for name, run in runs.items()}  # keyed by Metric
    scored, cpu = time.perf_counter(), time.process_time()
    compare_values(values, seed=0, resamples=resamples)
    done = time.perf_counter()
    return done - started, done - scored, time.process_time() - cpu


def time_ranx(qrels: dict, runs: dict, rounds: int) -> float:
    from ranx import Qrels, Run, compare

    started = time.perf_counter()
    compare(Qrels(qrels), [Run(run, name=name) for name, run in runs.items()], metrics=RANX,
            stat_test="fisher", n_permutations=rounds, max_p=0.05, random_seed=0)
    return time.perf_counter() - started


def main() -> None:
    qrels, runs = workload()
    ours_total, ours_stats, ours_cpu = time_goldeval(qrels, runs, 10_000)
    ours_total_1k, _, _ = time_goldeval(qrels, runs, 1_000)
    ranx_cold = time_ranx(qrels, runs, 1_000)
    ranx_warm = time_ranx(qrels, runs, 1_000)
    result = {
        "workload": f"{N_SYSTEMS} systems x {len(OURS)} metrics x {N_QUESTIONS} questions x {N_DOCS} results",
        "goldeval_10k_resamples_s": round(ours_total, 3),
        "goldeval_10k_stats_only_s": round(ours_stats, 3),
        "goldeval_10k_stats_only_cpu_s": round(ours_cpu, 3),
        "goldeval_1k_resamples_s": round(ours_total_1k, 3),
        "ranx_fisher_1k_cold_s": round(ranx_cold, 3),
        "ranx_fisher_1k_warm_s": round(ranx_warm, 3),
        "ratio_ranx_warm_1k_over_goldeval_10k": round(ranx_warm / ours_total, 1),
        "ratio_ranx_warm_1k_over_goldeval_1k": round(ranx_warm / ours_total_1k, 1),
    }
    print(f"stats: {result['workload']}")
    print(f"  goldeval, 10,000 bootstrap resamples + 10,000 randomization rounds: {ours_total:.2f} s "
          f"(stats alone {ours_stats:.2f} s wall, {ours_cpu:.2f} s CPU; the target is under 1 s)")
    print(f"  goldeval, 1,000 of each:                                           {ours_total_1k:.2f} s")
    print(f"  ranx compare, Fisher 1,000 rounds, no intervals: cold {ranx_cold:.2f} s, warm {ranx_warm:.2f} s")
    print(f"  ratio ranx warm (1k rounds) / goldeval (10k): {result['ratio_ranx_warm_1k_over_goldeval_10k']}x; "
          f"same rounds (1k): {result['ratio_ranx_warm_1k_over_goldeval_1k']}x")
    print(f"wrote {write_results('stats', result)}")


if __name__ == "__main__":
    main()
