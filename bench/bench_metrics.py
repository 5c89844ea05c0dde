"""Metric throughput: goldeval's engine beside pytrec_eval and ranx on the same Python dicts, and
`goldeval trec` beside pytrec_eval's parse-and-evaluate on the same TREC files.

Workload: 10k and 100k questions x 100 results (doc ids like `msmarco_doc_07_000123456` drawn from a
collection of 1M ids, one str object per id as a retriever returns them, and again realistically: a new
str per result and other str objects for the qrels' ids, as a database's rows give them, and those dicts
written and read back by the json module, as a user loads JSON files (it keeps one str per distinct key of
a file, so a doc id is one object again); the walk's time differs a lot between them; scores rounded to 4 decimals;
1-5 graded relevant documents per question, most of them retrieved, plus judged non-relevant ones).
Every tool computes the same five measures (nDCG@10, recall@100, P@10, MRR, MAP):
- goldeval `evaluate_scores(qrels, run, metrics)`, its first call (no warm-up) and warm ones;
- pytrec_eval `RelevanceEvaluator(qrels, measures).evaluate(run)` (trec_eval's C code);
- ranx `evaluate(Qrels(qrels), Run(run), metrics)` (numba), first call and warm, at 10k only: at 100k
  it takes minutes and more memory than this suite allows (2 GB);
- a bare Python walk over every (doc, score) of the run, keys and values and nothing else: what a user's
  own minimal pass touches (it leaves out the judgments, which any evaluation reads too: walking the qrels
  costs another quarter of a walk with fresh ids). With fresh ids the walk is about 4x faster than with
  shared ones (fresh strs lie in memory in the order it reads them; shared ones are scattered over the
  1M-id pool), while goldeval costs about the same on both (it touches a run's ids only at the look-ups
  of judged documents);
- with fresh ids, goldeval with its Python reader of the dicts (`run_goldeval_python_reader`: an install
  where no C compiler built `goldeval.metrics._locate`), and the floor of reading the run's dicts as that
  reader does (`floor_chunks`, prepared outside the timing): every score of the lists holding a relevant
  judgment (`read_scores`, `np.fromiter`), then that and each such judged id looked up in its list, a chunk
  at a time (`read_and_look_up`): no counting, no judgments read, no metric. Issue 23, 100k questions, CPU
  seconds on a loaded 2-core machine: walk 0.15, every score 0.89 walks, with the look-ups 1.52 walks, the
  Python reader 2.70 walks: 1.3x the walk is out of reach of a Python reader of the dicts, hence the C one
  (reads each list's scores through its values iterator, touching no key, and counts in C: about 1 walk).
TREC files: `goldeval trec` (CLI, in-process) beside `pytrec_eval.parse_qrel/parse_run` + evaluate; also
each one's first call in its fresh process (imports, and numba loading goldeval's compiled reader); on
files of 4-decimal scores and, realistically, of full-precision scores as Python writes them (`f"{x}"`,
16 or 17 digits: issue 23 found those 3x slower to read than 4 decimals).
Each measurement runs in its own process (its data built there, outside the timing), so one tool's
memory is never another's: the report gives each process's peak memory. Medians of 3, interleaved;
ratios are what to read on a shared machine; the realistic dicts' line is in CPU seconds, and says
whether goldeval's means there equal those with shared ids (the same ids and scores, other objects).
Writes bench/results/metrics.json.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from itertools import chain, repeat
from pathlib import Path
from typing import Any

import numpy as np

from bench import own_peak_mb, write_results

SIZES = (10_000, 100_000)
RANX_SIZES = (10_000,)
N_RESULTS = 100
COLLECTION = 1_000_000
REPEATS = 3
METRICS = ["ndcg@10", "recall@100", "precision@10", "mrr", "map"]
PYTREC = {"ndcg_cut.10", "recall.100", "P.10", "recip_rank", "map"}
TREC_ARGS = ["-m", "ndcg_cut.10", "-m", "recall.100", "-m", "P.10", "-m", "recip_rank", "-m", "map"]

Dicts = tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]


def synthetic(n_questions: int, seed: int = 0, *, fresh_ids: bool = False, full_precision: bool = False) -> Dicts:
    """Qrels and a run as plain dicts, shaped like a real run over a large collection. Doc ids are one
    str object per collection id (a retriever returns its own id objects), or with `fresh_ids` a new
    str per result, and the qrels' ids other str objects again (as when the run and the judgments are
    read from two JSON files or a database). Scores have 4 decimals, or with `full_precision` all the
    digits of a float64 (what a model computes; Python writes them in 16 or 17 digits)."""
    rng = np.random.default_rng(seed)
    pool: dict[int, str] = {} if not fresh_ids else _NoPool()
    ids = rng.integers(0, COLLECTION, size=(n_questions, N_RESULTS)).tolist()
    raw = rng.gamma(4.0, 3.0, size=(n_questions, N_RESULTS))
    scores = (raw if full_precision else np.round(raw, 4)).tolist()
    n_rel = rng.integers(1, 6, size=n_questions).tolist()
    grades = rng.integers(1, 4, size=(n_questions, 5)).tolist()
    retrieved = (rng.random((n_questions, 5)) < 0.7).tolist()
    picks = rng.integers(0, N_RESULTS, size=(n_questions, 7)).tolist()
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(n_questions):
        docs = [pool.get(x) or pool.setdefault(x, f"msmarco_doc_{x % 60:02d}_{x * 7919 % 10**9:09d}") for x in ids[i]]
        qid = f"q{i:06d}"
        run[qid] = dict(zip(docs, scores[i], strict=True))
        judged = {docs[picks[i][5]]: 0, docs[picks[i][6]]: 0}
        for j in range(n_rel[i]):
            doc = docs[picks[i][j]] if retrieved[i][j] else f"msmarco_doc_99_{i:06d}{j}"
            judged[doc] = grades[i][j]
        qrels[qid] = {(d + ".")[:-1]: r for d, r in judged.items()} if fresh_ids else judged  # a new str each
    return qrels, run


class _NoPool(dict):  # type: ignore[type-arg]
    """A pool that never keeps anything: every look-up misses, so every id is a new str."""

    def setdefault(self, key: int, value: str) -> str:  # type: ignore[override]
        return value


def run_goldeval(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, float]:
    from goldeval.metrics.compute import evaluate_scores
    from goldeval.metrics.definitions import parse_metric

    values = evaluate_scores(qrels, run, [parse_metric(m) for m in METRICS])
    return {str(m): float(v.mean()) for m, v in values.items()}


def run_pytrec(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, float]:
    import pytrec_eval

    per_query = pytrec_eval.RelevanceEvaluator(qrels, PYTREC).evaluate(run)
    names = ["ndcg_cut_10", "recall_100", "P_10", "recip_rank", "map"]
    return {m: float(np.mean([v[n] for v in per_query.values()])) for m, n in zip(METRICS, names, strict=True)}


def run_ranx(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, float]:
    from ranx import Qrels, Run, evaluate

    scores = evaluate(Qrels(qrels), Run(run), METRICS, make_comparable=True)
    return {m: float(scores[m]) for m in METRICS}


def run_ir_measures(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, float]:
    import ir_measures
    from ir_measures import AP, RR, P, R, nDCG

    measures = [nDCG @ 10, R @ 100, P @ 10, RR, AP]
    scores = ir_measures.calc_aggregate(measures, qrels, run)
    return {m: float(scores[measure]) for m, measure in zip(METRICS, measures, strict=True)}


def run_goldeval_python_reader(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, float]:
    """goldeval reading the dicts in Python, as an install without a C compiler does."""
    from goldeval.metrics import judge

    kept, judge._clocate = judge._clocate, None
    try:
        return run_goldeval(qrels, run)
    finally:
        judge._clocate = kept


def walk(_: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> None:
    """A user's own minimal pass over the run: every (doc, score) pair, keys and values, and nothing else."""
    for docs in run.values():
        for _doc, _score in docs.items():
            pass


Chunks = list[tuple[list[dict[str, float]], int, list[dict[str, float]], list[str]]]


def floor_chunks(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> Chunks:
    """What any reader of the dicts that ranks the judged documents must touch, prepared outside the
    timing: the lists of the questions with a relevant judgment, cut as `goldeval.metrics.judge` cuts them
    (`READ_CELLS` scores a chunk), and each relevant judged id with the list it is looked up in."""
    from goldeval.metrics.judge import READ_CELLS

    chunks: Chunks = []
    lists: list[dict[str, float]] = []
    rows: list[dict[str, float]] = []
    ids: list[str] = []
    for qid, marks in qrels.items():
        docs = run.get(qid, {})
        relevant = [doc for doc, grade in marks.items() if grade >= 1]
        if not relevant:
            continue
        lists.append(docs)
        rows += [docs] * len(relevant)
        ids += relevant
        if sum(map(len, lists)) >= READ_CELLS:
            chunks.append((lists, sum(map(len, lists)), rows, ids))
            lists, rows, ids = [], [], []
    if lists:
        chunks.append((lists, sum(map(len, lists)), rows, ids))
    return chunks


def read_scores(chunks: Chunks) -> None:
    """Every score of those lists read into numpy (`np.fromiter`), nothing else: needed to count the
    scores above each judged document."""
    for lists, cells, _, _ in chunks:
        np.fromiter(chain.from_iterable(map(dict.values, lists)), np.float64, cells)


def read_and_look_up(chunks: Chunks) -> None:
    """Every score read and each relevant judged id looked up in its list, a chunk at a time, as
    goldeval does, nothing counted or assembled: the floor of goldeval's way of reading the dicts."""
    for lists, cells, rows, ids in chunks:
        np.fromiter(chain.from_iterable(map(dict.values, lists)), np.float64, cells)
        np.fromiter(map(dict.get, rows, ids, repeat(math.nan)), np.float64, len(ids))


CPU: dict[str, list[float]] = {}
"""CPU seconds of each timed call, by function name: on a shared machine they move less than wall time."""


def timed(fn: Callable[..., object], *args: object) -> float:
    """Wall seconds of fn(*args); its CPU seconds (all threads) go to CPU[fn.__name__]."""
    start, cpu = time.perf_counter(), time.process_time()
    fn(*args)
    CPU.setdefault(fn.__name__, []).append(time.process_time() - cpu)
    return time.perf_counter() - start


def cpu_medians() -> dict[str, float]:
    return {f"{name}_cpu_s": statistics.median(values) for name, values in CPU.items()}


# --- one measurement per process ---------------------------------------------------------------------


def measure_dicts(n: int | str) -> dict[str, Any]:
    """walk, goldeval (first call, then warm) and pytrec_eval, interleaved, on the same dicts."""
    qrels, run = synthetic(int(n))
    out: dict[str, Any] = {"goldeval_first_s": timed(run_goldeval, qrels, run)}
    CPU.clear()  # CPU seconds of the warm calls only
    times: dict[str, list[float]] = {"walk": [], "goldeval": [], "pytrec_eval": []}
    for _ in range(REPEATS):
        for name, fn in (("walk", walk), ("goldeval", run_goldeval), ("pytrec_eval", run_pytrec)):
            times[name].append(timed(fn, qrels, run))
    out.update({f"{k}_s": statistics.median(v) for k, v in times.items()})
    out.update(cpu_medians())
    ours, ref = run_goldeval(qrels, run), run_pytrec(qrels, run)
    out["max_abs_diff_vs_pytrec_eval"] = max(abs(ours[m] - ref[m]) for m in METRICS)  # same numbers, or timing means nothing
    out["means"] = ours
    return out


def measure_fresh(n: int | str, source: str = "built") -> dict[str, Any]:
    """walk and goldeval on dicts whose every doc id is its own str object, the qrels' ids others again
    (a run and judgments read from a database: the realistic case), interleaved with the floor:
    reading every score of the lists goldeval reads, then that and the look-ups (`read_and_look_up`).
    `source` "json": the same dicts written and read back by the json module, as a user loads a run and
    qrels saved as JSON (its reader keeps one str per distinct key of a document, so a doc id retrieved
    for many questions is one object again, in the order first read)."""
    qrels, run = synthetic(int(n), fresh_ids=True)
    if source == "json":
        qrels, run = json.loads(json.dumps(qrels)), json.loads(json.dumps(run))
    out: dict[str, Any] = {"goldeval_first_s": timed(run_goldeval, qrels, run)}
    out["goldeval_first_cpu_s"] = CPU.pop(run_goldeval.__name__)[0]
    chunks = floor_chunks(qrels, run)
    # the peer tools on the same fresh dicts (the row); ranx only where it runs in reasonable time
    peers = [("pytrec_eval", run_pytrec), ("ir_measures", run_ir_measures)] if source == "built" else [("pytrec_eval", run_pytrec)]
    if int(n) in RANX_SIZES and source == "built":
        run_ranx(qrels, run)  # numba compiles here: not ranx's evaluation
        peers.append(("ranx", run_ranx))
    times: dict[str, list[float]] = {"walk": [], "goldeval": [], "goldeval_python_reader": [], "read_scores": [],
                                     "read_and_look_up": []}  # fmt: skip
    for _ in range(REPEATS):
        times["walk"].append(timed(walk, qrels, run))
        times["goldeval"].append(timed(run_goldeval, qrels, run))
        times["goldeval_python_reader"].append(timed(run_goldeval_python_reader, qrels, run))
        times["read_scores"].append(timed(read_scores, chunks))
        times["read_and_look_up"].append(timed(read_and_look_up, chunks))
        for name, fn in peers:
            times.setdefault(name, []).append(timed(fn, qrels, run))
    out.update({f"{k}_s": statistics.median(v) for k, v in times.items()})
    out.update(cpu_medians())
    out["means"] = ours = run_goldeval(qrels, run)
    out["python_reader_means"] = run_goldeval_python_reader(qrels, run)
    for name, fn in peers:  # the same numbers, or the timing means nothing
        theirs = fn(qrels, run)
        out[f"max_abs_diff_vs_{name}"] = max(abs(ours[m] - theirs[m]) for m in METRICS)
    return out


def measure_ranx(n: int | str) -> dict[str, Any]:
    qrels, run = synthetic(int(n))
    first = timed(run_ranx, qrels, run)  # numba compiles in here: ranx's first call
    return {"ranx_first_s": first, "ranx_s": statistics.median(timed(run_ranx, qrels, run) for _ in range(REPEATS))}


def write_trec(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], folder: Path) -> tuple[str, str]:
    qrels_path, run_path = folder / "qrels.txt", folder / "run.txt"
    with qrels_path.open("w") as out:
        out.writelines(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items())
    with run_path.open("w") as out:
        for q, docs in run.items():
            out.writelines(f"{q} Q0 {d} {rank} {s} bench\n" for rank, (d, s) in enumerate(docs.items(), 1))
    return str(qrels_path), str(run_path)


def trec_goldeval(qrels_path: str, run_path: str) -> None:
    from goldeval.cli import main as goldeval_main

    with contextlib.redirect_stdout(io.StringIO()):
        assert goldeval_main(["trec", *TREC_ARGS, qrels_path, run_path]) == 0


def trec_pytrec(qrels_path: str, run_path: str) -> None:
    import pytrec_eval

    with open(qrels_path) as q, open(run_path) as r:
        qrels, run = pytrec_eval.parse_qrel(q), pytrec_eval.parse_run(r)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, PYTREC).evaluate(run)
    for name in ("ndcg_cut_10", "recall_100", "P_10", "recip_rank", "map"):
        pytrec_eval.compute_aggregated_measure(name, [v[name] for v in per_query.values()])


def measure_trec(tool: str, qrels_path: str, run_path: str) -> dict[str, Any]:
    """The first call in a fresh process (imports; for goldeval, numba loading its compiled kernels, about
    0.5 s, or compiling them once per machine), then the median of REPEATS more."""
    fn = trec_goldeval if tool == "goldeval" else trec_pytrec
    first = timed(fn, qrels_path, run_path)
    CPU.pop(fn.__name__)
    wall = statistics.median(timed(fn, qrels_path, run_path) for _ in range(REPEATS))
    return {f"{tool}_s": wall, f"{tool}_cpu_s": statistics.median(CPU[fn.__name__]), f"{tool}_first_s": first}


def in_process(kind: str, *args: str) -> dict[str, Any]:
    """Run one measurement in a fresh process; its result and its peak memory (MB)."""
    code = (f"import json, sys; from bench.bench_metrics import {kind}; r = {kind}(*sys.argv[1:]); "
            "from bench import own_peak_mb; r['peak_mb'] = round(own_peak_mb()); print(json.dumps(r))")
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])  # fmt: skip
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    rows: dict[str, Any] = {"machine": f"{platform.processor() or platform.machine()}, Python {platform.python_version()}",
                            "metrics": METRICS, "results_per_question": N_RESULTS, "dicts": {}}  # fmt: skip
    print(f"Metrics from Python dicts ({', '.join(METRICS)}), {N_RESULTS} results per question; medians of {REPEATS}.")
    for n in SIZES:
        row = in_process("measure_dicts", str(n))
        if n in RANX_SIZES:
            row.update({f"ranx_{k}": v for k, v in in_process("measure_ranx", str(n)).items()})
        fresh = in_process("measure_fresh", str(n))
        row.update({f"fresh_{k}": v for k, v in fresh.items()})
        from_json = in_process("measure_fresh", str(n), "json")
        row.update({f"json_{k}": v for k, v in from_json.items()})
        rows["dicts"][n] = row
        ranx = f"ranx {row['ranx_ranx_s']:.2f} s (first {row['ranx_ranx_first_s']:.1f} s)" if n in RANX_SIZES else "ranx not run"
        print(f"{n:>9,} questions  goldeval {row['goldeval_s']:.2f} s (first call {row['goldeval_first_s']:.2f} s, "
              f"{row['goldeval_first_s'] / row['goldeval_s']:.2f}x a warm one)   walk {row['walk_s']:.2f} s   "
              f"pytrec_eval {row['pytrec_eval_s']:.2f} s   {ranx}\n{'':>20}goldeval / walk = {row['goldeval_s'] / row['walk_s']:.2f}x   "
              f"pytrec_eval / goldeval = {row['pytrec_eval_s'] / row['goldeval_s']:.1f}x   max|diff| {row['max_abs_diff_vs_pytrec_eval']:.1e}"
              f"   peak {row['peak_mb']:,} MB", flush=True)  # fmt: skip
        print_fresh(row)
    for key, full in (("trec_files", False), ("trec_files_full_precision", True)):
        rows[key] = trec_rows(full)
    rows["bench_process_peak_mb"] = round(own_peak_mb())
    print(f"\nwrote {write_results('metrics', rows)}")


def print_fresh(row: dict[str, Any]) -> None:
    """The realistic case's line: CPU seconds (they move less than wall time on a shared machine)."""
    walk_cpu = row["fresh_walk_cpu_s"]
    print(f"{'':>20}realistic: a new str per doc id, the qrels' others again (as a database's rows give them), CPU seconds: goldeval "
          f"{row['fresh_run_goldeval_cpu_s']:.3f} s, walk {walk_cpu:.3f} s: {row['fresh_run_goldeval_cpu_s'] / walk_cpu:.2f}x the walk; "
          f"first call {row['fresh_goldeval_first_cpu_s'] / row['fresh_run_goldeval_cpu_s']:.2f}x a warm one (peak {row['fresh_peak_mb']:,} MB); "
          f"same numbers as with shared ids: {'yes' if row['fresh_means'] == row['means'] else 'NO'}\n{'':>20}with the Python "
          f"reader (no C compiler at install): {row['fresh_run_goldeval_python_reader_cpu_s'] / walk_cpu:.2f}x the walk, same numbers: "
          f"{'yes' if row['fresh_python_reader_means'] == row['fresh_means'] else 'NO'}; the floor of reading the run's dicts in Python "
          f"(judgments not counted): every score of the lists read {row['fresh_read_scores_cpu_s'] / walk_cpu:.2f}x the walk, with each "
          f"judged id looked up {row['fresh_read_and_look_up_cpu_s'] / walk_cpu:.2f}x", flush=True)  # fmt: skip
    json_walk, json_ours = row["json_walk_cpu_s"], row["json_run_goldeval_cpu_s"]
    print(f"{'':>20}the same dicts read back by the json module (one str per distinct id of each file), CPU seconds: "
          f"goldeval {json_ours:.3f} s, walk {json_walk:.3f} s: {json_ours / json_walk:.2f}x the walk; the floor "
          f"{row['json_read_and_look_up_cpu_s'] / json_walk:.2f}x; same numbers: {'yes' if row['json_means'] == row['means'] else 'NO'}",
          flush=True)  # fmt: skip
    ours = row["fresh_run_goldeval_cpu_s"]
    peers = [(name, row[f"fresh_run_{fn}_cpu_s"], row[f"fresh_max_abs_diff_vs_{name}"])
             for name, fn in (("pytrec_eval", "pytrec"), ("ir_measures", "ir_measures"), ("ranx", "ranx"))
             if f"fresh_run_{fn}_cpu_s" in row]
    print(f"{'':>20}the peers on the same fresh dicts, CPU seconds: " + "; ".join(
        f"{name} {t:.2f} s ({t / ours:.1f}x goldeval's, max|diff| {diff:.1e})" for name, t, diff in peers), flush=True)


def trec_rows(full_precision: bool) -> dict[int, dict[str, Any]]:
    """`goldeval trec` beside pytrec_eval's parse + evaluate on files of 4-decimal scores, or of scores
    written by Python in full precision (`f"{score}"`: 16 or 17 digits, what a program writes)."""
    what = "full-precision scores as Python writes them (17 digits)" if full_precision else "scores with 4 decimals"
    print(f"\n`goldeval trec` on TREC files of {what}, beside pytrec_eval's parse + evaluate (same measures):")
    out = {}
    for n in SIZES:
        with tempfile.TemporaryDirectory() as tmp:
            paths = write_trec(*synthetic(n, seed=2, full_precision=full_precision), Path(tmp))
            ours, theirs = in_process("measure_trec", "goldeval", *paths), in_process("measure_trec", "pytrec", *paths)
        row = {**ours, **{k: v for k, v in theirs.items() if k != "peak_mb"}, "goldeval_peak_mb": ours["peak_mb"],
               "pytrec_peak_mb": theirs["peak_mb"]}  # fmt: skip
        row["ratio"] = row["pytrec_s"] / row["goldeval_s"]
        row["cpu_ratio"] = row["pytrec_cpu_s"] / row["goldeval_cpu_s"]
        out[n] = row
        print(f"{n:>9,} questions  goldeval trec {row['goldeval_s']:.2f} s (peak {row['goldeval_peak_mb']:,} MB)   "
              f"parse + pytrec_eval {row['pytrec_s']:.2f} s (peak {row['pytrec_peak_mb']:,} MB)   ratio {row['ratio']:.2f}x"
              f"   (CPU seconds: {row['goldeval_cpu_s']:.2f} against {row['pytrec_cpu_s']:.2f}, {row['cpu_ratio']:.2f}x)\n"
              f"{'':>20}first call in a fresh process: goldeval {row['goldeval_first_s']:.2f} s, pytrec_eval "
              f"{row['pytrec_first_s']:.2f} s: {row['pytrec_first_s'] / row['goldeval_first_s']:.2f}x", flush=True)  # fmt: skip
    return out


if __name__ == "__main__":
    main()
