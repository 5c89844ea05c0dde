"""Sweep throughput: the same sweep in this process, then on a local Ray with 1 and with 2 workers.

    python -m bench sweep

The sweep: Cranfield, two chunkings (whole abstracts and 1000:200) x bm25 fused with dense:minilm-l3 at
three weights, plus bm25 alone: 8 configurations, 4 base runs (bm25 and dense per chunking), about
3,900 texts to embed. Each mode starts from an empty workspace, so it embeds and searches everything.
Measured: wall time of the embedding stage (texts/s) and of the search stage (runs/s), and end to end
(configurations/s, Ray's start included). Ratios: 2 workers against 1 (how the stages scale), and one
process against 1 worker (what Ray's tasks cost). Metrics must be identical in the three modes.
Nothing is asserted about time: on a shared 2-core machine the numbers move with the other processes.
Results: bench/results/sweep.json.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.cranfield import DATA

GRID = {"chunking": ["none", "1000:200"], "retriever": ["bm25", "hybrid"], "model": ["minilm-l3"],
        "fusion": ["norm"], "weight": [0.3, 0.5, 0.7]}


def one(workers: int | None) -> dict[str, Any]:
    from goldeval.corpus import load_corpus
    from goldeval.golden.cranfield import load_cranfield_golden
    from goldeval.sweep import RayExecutor, Settings, grid_from_mapping, sweep

    corpus, golden = load_corpus(DATA), load_cranfield_golden(DATA)
    workspace = Path(tempfile.mkdtemp(prefix="gs-bench-", dir="/tmp"))  # short: Ray's sockets live under it
    try:
        started = time.perf_counter()
        executor = RayExecutor(workers=workers, workspace=workspace) if workers else None
        try:
            result = sweep(grid_from_mapping(GRID), golden, corpus=corpus, workspace=workspace, executor=executor,
                           settings=Settings(k=(1, 5, 10), headline="ndcg@10", resamples=1000), record_history=False)
        finally:
            if executor is not None:
                executor.close()
        total = time.perf_counter() - started
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    wall = result.stages["wall_seconds"]
    return {
        "mode": f"ray, {workers} worker(s)" if workers else "this process", "workers": workers or 0,
        "configurations": len(result.cells), "runs": result.stages["runs"]["computed"],
        "texts_embedded": result.stages["embeddings"]["texts_embedded"],
        "embed_s": wall.get("embed", 0.0), "search_s": wall.get("search", 0.0), "score_s": wall.get("score", 0.0),
        "total_s": total, "metrics": [(c.label, {str(m): v for m, v in c.metrics.items()}) for c in result.cells],
    }


def main() -> None:
    from bench import write_results

    rows = []
    for workers in (None, 1, 2):
        row = one(workers)
        rows.append(row)
        print(f"{row['mode']:<20} embed {row['texts_embedded'] / row['embed_s']:6.1f} texts/s  "
              f"search {row['runs'] / row['search_s']:5.2f} runs/s  "
              f"end to end {row['configurations'] / row['total_s']:5.3f} configurations/s ({row['total_s']:.0f}s)",
              flush=True)
    local, one_worker, two = rows
    identical = local["metrics"] == one_worker["metrics"] == two["metrics"]
    ratios = {
        "embed_2_vs_1_worker": (two["texts_embedded"] / two["embed_s"]) / (one_worker["texts_embedded"] / one_worker["embed_s"]),
        "search_2_vs_1_worker": (two["runs"] / two["search_s"]) / (one_worker["runs"] / one_worker["search_s"]),
        "end_to_end_2_vs_1_worker": one_worker["total_s"] / two["total_s"],
        "end_to_end_process_vs_1_worker": one_worker["total_s"] / local["total_s"],
    }
    for name, value in ratios.items():
        print(f"{name}: {value:.2f}x")
    print(f"metrics identical in the three modes: {identical}")
    for row in rows:
        row.pop("metrics")
    path = write_results("sweep", {"cores": os.cpu_count(), "load_average": os.getloadavg(), "rows": rows,
                                   "ratios": ratios, "metrics_identical": identical})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
