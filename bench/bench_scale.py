"""Scale: BM25 over up to 1M passages, and a usearch HNSW index over up to 1M x 384 vectors.

    python -m bench scale                       # every size that fits SCALE_BUDGET_S (default 1500 s)
    SCALE_PARTS=ann SCALE_BUDGET_S=2400 python -m bench scale   # one part, a bigger budget
    python -m bench.bench_scale bm25 1000000    # one measurement, printed as JSON (run in its own process)

Run on request only (`python -m bench scale`), not by `make bench`: the 1M sizes take minutes.

BM25 (goldeval's `BM25Retriever`, bm25s underneath): passages synthesized from a 50,000-word vocabulary
with Zipf-distributed word frequencies (s = 1.07, like English text) and lengths from 20 to 120 words,
seeded. Measured per size: index time, peak memory of the process (ru_maxrss, each size in a fresh
process so one size's memory is not another's), queries per second over 1,000 two-to-five-word queries.

ANN (usearch, cosine, float32): vectors drawn from a mixture of n / 100 Gaussian clusters on the unit
sphere (embeddings cluster by topic, each about cosine 0.9 from its centre; uniform random vectors in
384 dimensions are a worst case no real corpus has), seeded; 1,000 held-out queries from the same
mixture. Recall@10 against exact search (numpy, blocked matrix products). Built with connectivity M = 16
(and 32 up to 100,000) and expansion_add 128; then expansion_search swept over 16..512 on the same
index: recall@10 and queries per second at each. The knee: the smallest expansion_search whose recall
is within 0.01 of the best the index reaches.

Sizes run smallest first, each in a subprocess with a time limit; a size that would not finish within
the remaining budget (extrapolated from the measured growth) is skipped and said so, and the report
extrapolates 1M from the largest sizes measured. Results: bench/results/scale.json.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np

from bench import own_peak_mb

BM25_SIZES = (10_000, 100_000, 300_000, 1_000_000)
ANN_SIZES = (10_000, 100_000, 300_000, 1_000_000)
VOCABULARY = 50_000
DIM = 384
POINTS_PER_CLUSTER = 100
"""Clusters grow with the corpus (n / 100 of them), so every size is as hard for the index: with a fixed
number of clusters a small corpus has near-empty clusters (neighbours from far away, hard) and a large one
crowded clusters (neighbours close by, easy), and the curve would measure that instead of the index."""
NOISE = 0.5
"""The norm of a vector's offset from its cluster centre (norm 1): cosine about 0.9 to the centre, as
sentence embeddings sit near their topic's centroid."""
QUERIES = 1_000
EXPANSIONS = (16, 32, 64, 128, 256, 512)
CONNECTIVITY = (16, 32)
"""M=32 only up to LARGE_M_UP_TO vectors: it builds about 1.7x slower, and M=16 is usearch's and goldeval's default."""
LARGE_M_UP_TO = 100_000
BUDGET_S = float(os.environ.get("SCALE_BUDGET_S", "1500"))
PARTS = tuple(os.environ.get("SCALE_PARTS", "bm25,ann").split(","))
"""`SCALE_PARTS=ann python -m bench scale` runs one part, with all of the budget."""


def words(n_words: int, rng: np.random.Generator) -> np.ndarray:
    """Word ids with Zipf(1.07) frequencies over the vocabulary (rank 1 the most frequent)."""
    ranks = np.arange(1, VOCABULARY + 1, dtype=np.float64)
    p = ranks ** -1.07
    return rng.choice(VOCABULARY, size=n_words, p=p / p.sum())


def synth_passages(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    vocab = [f"w{i:05d}" for i in range(VOCABULARY)]
    lengths = rng.integers(20, 121, size=n)
    ids = words(int(lengths.sum()), rng)
    out, start = [], 0
    for length in lengths:
        out.append(" ".join(vocab[i] for i in ids[start : start + length]))
        start += length
    return out


def bm25_one(n: int) -> dict[str, Any]:
    from goldeval.corpus.model import Passage
    from goldeval.retrievers.bm25 import BM25Retriever

    texts = synth_passages(n)
    passages = [Passage(f"p{i}", f"p{i}", t) for i, t in enumerate(texts)]
    del texts
    rng = np.random.default_rng(1)
    vocab = [f"w{i:05d}" for i in range(VOCABULARY)]
    queries = {f"q{i}": " ".join(vocab[w] for w in words(int(rng.integers(2, 6)), rng)) for i in range(QUERIES)}
    start = time.perf_counter()
    retriever = BM25Retriever(passages, stem=False, stopwords=False)  # synthetic words: nothing to stem
    index_s = time.perf_counter() - start
    start = time.perf_counter()
    retriever.search(queries, top_k=10)
    search_s = time.perf_counter() - start
    return {"n": n, "index_s": index_s, "docs_per_s": n / index_s, "queries_per_s": QUERIES / search_s,
            "peak_rss_mb": own_peak_mb()}


def mixture(n: int, rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    out = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 100_000):
        stop = min(n, start + 100_000)
        pick = rng.integers(0, len(centres), size=stop - start)
        noise = rng.normal(0, NOISE / np.sqrt(DIM), size=(stop - start, DIM)).astype(np.float32)
        block = centres[pick] + noise
        out[start:stop] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def exact_top10(vectors: np.ndarray, queries: np.ndarray) -> np.ndarray:
    best_s = np.full((len(queries), 10), -np.inf, dtype=np.float32)
    best_i = np.zeros((len(queries), 10), dtype=np.int64)
    for start in range(0, len(vectors), 100_000):
        scores = queries @ vectors[start : start + 100_000].T
        top = np.argpartition(-scores, 10, axis=1)[:, :10]
        s = np.take_along_axis(scores, top, axis=1)
        cand_s, cand_i = np.hstack([best_s, s]), np.hstack([best_i, top + start])
        keep = np.argsort(-cand_s, axis=1)[:, :10]
        best_s, best_i = np.take_along_axis(cand_s, keep, axis=1), np.take_along_axis(cand_i, keep, axis=1)
    return best_i


def ann_one(n: int) -> dict[str, Any]:
    from usearch.index import Index

    rng = np.random.default_rng(0)
    centres = rng.normal(size=(max(100, n // POINTS_PER_CLUSTER), DIM)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    vectors = mixture(n, rng, centres)
    queries = mixture(QUERIES, np.random.default_rng(1), centres)
    start = time.perf_counter()
    truth = exact_top10(vectors, queries)
    exact_s = time.perf_counter() - start
    out: dict[str, Any] = {"n": n, "exact_s": exact_s, "exact_queries_per_s": QUERIES / exact_s, "indexes": []}
    for m in (c for c in CONNECTIVITY if c == CONNECTIVITY[0] or n <= LARGE_M_UP_TO):
        index = Index(ndim=DIM, metric="cos", dtype="f32", connectivity=m, expansion_add=128)
        start = time.perf_counter()
        index.add(np.arange(n, dtype=np.uint64), vectors, threads=os.cpu_count() or 1)
        build_s = time.perf_counter() - start
        curve = []
        for ef in EXPANSIONS:
            index.expansion_search = ef
            start = time.perf_counter()
            found = index.search(queries, 10, threads=1).keys
            seconds = time.perf_counter() - start
            recall = float(np.mean([len(set(found[i].tolist()) & set(truth[i].tolist())) / 10 for i in range(QUERIES)]))
            curve.append({"expansion_search": ef, "recall_at_10": recall, "queries_per_s_1_thread": QUERIES / seconds})
        best = max(c["recall_at_10"] for c in curve)
        knee = next(c["expansion_search"] for c in curve if c["recall_at_10"] >= best - 0.01)
        out["indexes"].append({"connectivity": m, "expansion_add": 128, "build_s": build_s,
                               "vectors_per_s": n / build_s, "memory_mb": index.memory_usage / 2**20,
                               "curve": curve, "knee_expansion_search": knee})
        del index
    out["peak_rss_mb"] = own_peak_mb()
    return out


def _measure(kind: str, n: int, timeout: float) -> dict[str, Any] | None:
    command = [sys.executable, "-m", "bench.bench_scale", kind, str(n)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        print(f"  {kind} {n:,}: stopped after {timeout:.0f}s (the budget)", flush=True)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def _series(kind: str, sizes: tuple[int, ...], deadline: float, cost: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Measure sizes in order while the extrapolated time of the next one fits before `deadline`."""
    done: list[dict[str, Any]] = []
    notes: list[str] = []
    for n in sizes:
        left = deadline - time.monotonic()
        if done:
            last = done[-1]
            guess = last["_wall"] * n / last["n"] * 1.2  # both grow about linearly in n (measured below)
            if guess > left:
                notes.append(f"{kind} {n:,} skipped: about {guess:.0f}s expected, {left:.0f}s of the budget left")
                print(f"  {notes[-1]}", flush=True)
                continue
        start = time.monotonic()
        result = _measure(kind, n, max(left, 1.0))
        if result is None:
            notes.append(f"{kind} {n:,} did not finish within the budget")
            break
        result["_wall"] = time.monotonic() - start
        print(f"  {kind} {n:,}: {result[cost]:.1f}s, peak {result['peak_rss_mb']:.0f} MB", flush=True)
        done.append(result)
    return done, notes


def _extrapolate(points: list[dict[str, Any]], key: str, to: int) -> float | None:
    """`key` at `to` from the two largest sizes, on a power law fitted through them (log-log line)."""
    if len(points) < 2 or points[-1]["n"] >= to:
        return None
    a, b = points[-2], points[-1]
    slope = np.log(b[key] / a[key]) / np.log(b["n"] / a["n"])
    return float(b[key] * (to / b["n"]) ** slope)


def main() -> None:
    from bench import write_results

    deadline = time.monotonic() + BUDGET_S
    print(f"scale benchmarks ({', '.join(PARTS)}), {os.cpu_count()} cores, budget {BUDGET_S:.0f}s", flush=True)
    bm25, notes = _series("bm25", BM25_SIZES, deadline - BUDGET_S / 2 if "ann" in PARTS else deadline,
                          "index_s") if "bm25" in PARTS else ([], [])
    ann, more = _series("ann", ANN_SIZES, deadline, "exact_s") if "ann" in PARTS else ([], [])
    notes += more
    report: dict[str, Any] = {"cores": os.cpu_count(), "load_average": os.getloadavg(), "budget_s": BUDGET_S,
                              "bm25": bm25, "ann": ann, "notes": notes}
    if bm25 and bm25[-1]["n"] < 1_000_000:
        report["bm25_1m_extrapolated"] = {k: _extrapolate(bm25, k, 1_000_000) for k in ("index_s", "peak_rss_mb")}
    if ann and ann[-1]["n"] < 1_000_000:
        m16 = [{"n": row["n"], **row["indexes"][0]} for row in ann]
        report["ann_1m_extrapolated"] = {"build_s_m16": _extrapolate(m16, "build_s", 1_000_000),
                                         "memory_mb_m16": _extrapolate(m16, "memory_mb", 1_000_000),
                                         "exact_s": _extrapolate(ann, "exact_s", 1_000_000)}
    for row in bm25:
        print(f"bm25 {row['n']:>9,}: index {row['index_s']:7.1f}s ({row['docs_per_s']:,.0f} docs/s), "
              f"{row['queries_per_s']:,.0f} queries/s, peak {row['peak_rss_mb']:,.0f} MB")
    for row in ann:
        for ix in row["indexes"]:
            knee = next(c for c in ix["curve"] if c["expansion_search"] == ix["knee_expansion_search"])
            print(f"ann  {row['n']:>9,} M={ix['connectivity']}: build {ix['build_s']:.1f}s, {ix['memory_mb']:,.0f} MB; "
                  f"knee at expansion_search {knee['expansion_search']}: recall@10 {knee['recall_at_10']:.3f}, "
                  f"{knee['queries_per_s_1_thread']:,.0f} q/s (exact: {row['exact_queries_per_s']:,.0f} q/s)")
    for name, values in report.items():
        if name.endswith("_extrapolated"):
            print(f"{name}: " + ", ".join(f"{k} {v:,.0f}" for k, v in values.items() if v is not None))
    for note in notes:
        print(f"note: {note}")
    print(f"wrote {write_results('scale', report)}")


if __name__ == "__main__":
    if len(sys.argv) == 3:
        kind, size = sys.argv[1], int(sys.argv[2])
        print(json.dumps(bm25_one(size) if kind == "bm25" else ann_one(size)))
    else:
        main()
