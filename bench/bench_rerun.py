"""Re-running an unchanged evaluation: `goldeval demo` (the stdlib docs, bm25 + dense:minilm + hybrid, 140
questions, with every statistic) run again with nothing changed, beside the same command with
`--no-cache` (indexing, searching and resampling again; the embeddings still come from the workspace's
embedding cache, so that side is already faster than a first run).

Each run is its own process, as a user runs it: the wall time includes Python's start and every import.
The workspace is goldeval's default (`$GOLDEVAL_WORKSPACE`, else `.goldeval`); one untimed run first fills
whatever it lacks (the corpus, the model, the embeddings, the kept runs and statistics). Medians of 3;
results: bench/results/rerun.json.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

from bench import write_results

REPEATS = 3
RETRIEVERS = ["--retriever", "bm25", "--retriever", "dense:minilm", "--retriever", "hybrid:bm25+dense:minilm"]
"""Named: the demo's own default is the fast wordllama (issue 19); this measures the transformer's demo."""
COMMAND = [sys.executable, "-m", "goldeval", "demo", "--no-misses", *RETRIEVERS]


def timed(extra: list[str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the child, its stdout) of one `goldeval demo` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([*COMMAND, *extra], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def main() -> None:
    start = time.perf_counter()
    timed([])  # fills the workspace: minutes the first time on a new machine
    print(f"rerun: workspace ready in {time.perf_counter() - start:.1f} s", flush=True)
    cached: list[tuple[float, float, str]] = []
    fresh: list[tuple[float, float, str]] = []
    for _ in range(REPEATS):  # interleaved, so the machine's load falls on both alike
        cached.append(timed([]))
        fresh.append(timed(["--no-cache"]))
    same = all(out == fresh[0][2] for _, _, out in cached + fresh)  # the same scorecard, or timing means nothing
    result: dict[str, Any] = {
        "command": "goldeval demo --no-misses " + " ".join(RETRIEVERS),
        "unchanged_s": statistics.median(w for w, _, _ in cached),
        "unchanged_cpu_s": statistics.median(c for _, c, _ in cached),
        "no_cache_s": statistics.median(w for w, _, _ in fresh),
        "no_cache_cpu_s": statistics.median(c for _, c, _ in fresh),
        "same_scorecard": same,
        "load_average": os.getloadavg(),
    }
    print(f"rerun: unchanged demo {result['unchanged_s']:.2f} s wall ({result['unchanged_cpu_s']:.2f} CPU s); "
          f"with --no-cache {result['no_cache_s']:.2f} s ({result['no_cache_cpu_s']:.2f} CPU s); "
          f"same scorecard: {same}")
    print(f"wrote {write_results('rerun', result)}")


if __name__ == "__main__":
    main()
