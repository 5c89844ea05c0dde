"""BM25 speed: goldeval's `BM25Retriever` beside bm25s used directly, in the same processes (issue 23).

Inputs, 1,000 queries each, top 100:
- real passages as users index them (the row issue 23 asks for): the demo's corpus, the pydoc pages of the
  Python standard library (`goldeval.corpus.stdlib`, rendered on this machine), cut with `--chunk 1500:200`
  (heading-aware, the size the README suggests), each chunk's title with its text as goldeval indexes it;
  queries: the demo golden set's questions, then runs of 8 to 16 words cut from the same text (seeded);
- the same pages' non-blank lines (69,772 on Python 3.11; a quarter of them `|` rules with no word, the
  passages that once scored differently from bm25s): real text at the scale of the issue's 88,331 passages;
- the easy inputs: 85,000 passages of 20 to 60 words cut from Cranfield's abstracts, with Cranfield's 225
  queries and 775 more cut the same way.
Same tokenizer output on both sides (lower-case, English stopwords, Snowball stemming).
- indexing: `BM25Retriever(passages)` beside `bm25s.tokenize` + `bm25s.BM25().index` on the same texts;
- queries, like with like: both tokenize the queries and return each query's passage ids and scores.
  goldeval: everything `search` does (tokenizing, the search on one thread, the `Run`: an (id, score)
  pair per result, Python objects); bm25s: `bm25s.tokenize` with the stemmer, then its numba backend on
  one thread (`BM25(backend="numba")`, `retrieve(..., corpus=ids, n_threads=1)`: ids and scores as two
  arrays), warm (compiled before timing). The top 10 of every query must be bm25s' passages with bm25s'
  scores, bit for bit.
Timing: CPU seconds (`time.process_time`: the machine is shared, and another program's load does not
count). Each input is measured in `PROCESSES` fresh processes, the inputs in turns (what ran before in a
process moved its ratio by up to 0.3x); in each, the two searches alternate for `SEARCH_ROUNDS` rounds,
their order swapped every round, each keeping its last result alive as a caller would, and the garbage
collection a call leaves due counted in its time (a full pass, ~0.1 s over a process's objects, falls in
whichever search starts it: the per-round range shows it). Reported: the ratio of the medians of all
rounds, each process's ratio, the median and range of the per-round ratios; indexing: medians of
`REPEATS` per process, then over processes. Also a second process's first search (no numba compilation
when the user cache works). Results: bench/results/bm25.json.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench import write_results

N_PASSAGES = 85_000
N_QUERIES = 1_000
TOP_K = 100
REPEATS = 3
SEARCH_ROUNDS = 9
PROCESSES = 3
UNITS = ("cranfield", "chunks", "lines")
"""The inputs: Cranfield's cuts, the Python docs' chunks, their lines (see the module docstring)."""
REAL_CHUNKING = "1500:200"


def corpus(n: int = N_PASSAGES, seed: int = 0) -> tuple[list[str], list[str]]:
    """(passages, queries) cut from Cranfield's abstracts and queries (see the module docstring)."""
    from bench.cranfield import DATA
    from goldeval.corpus import load_corpus
    from goldeval.golden.cranfield import load_cranfield_golden

    words = " ".join(p.text for p in load_corpus(DATA).passages()).split()
    rng = np.random.default_rng(seed)
    lengths = rng.integers(20, 61, size=n)
    starts = rng.integers(0, len(words) - 61, size=n)
    passages = [" ".join(words[s : s + n_words]) for s, n_words in zip(starts.tolist(), lengths.tolist(), strict=True)]
    queries = [q.question for q in load_cranfield_golden(DATA)]
    return passages, queries + _cut_queries(words, N_QUERIES - len(queries), rng)


def _cut_queries(words: list[str], n: int, rng: np.random.Generator) -> list[str]:
    """`n` queries of 8 to 16 consecutive words of `words`."""
    starts, lengths = rng.integers(0, len(words) - 17, size=n), rng.integers(8, 17, size=n)
    return [" ".join(words[s : s + k]) for s, k in zip(starts.tolist(), lengths.tolist(), strict=True)]


def python_docs(unit: str = "chunks", seed: int = 0) -> tuple[list[str], list[str]]:
    """(passages, queries) of real text, the demo's corpus (the stdlib's pydoc pages, cached in the
    workspace): its chunks (`REAL_CHUNKING`, title and text as goldeval indexes a chunk) or its non-blank
    lines; queries: the demo golden set's questions, then runs of 8 to 16 words cut from the pages."""
    from goldeval.corpus.chunking import parse_chunk_spec
    from goldeval.corpus.stdlib import build_stdlib_corpus
    from goldeval.golden.demo import demo_golden_path
    from goldeval.golden.io import load_golden
    from goldeval.store.workspace import default_workspace

    docs = build_stdlib_corpus(workspace=default_workspace())
    if unit == "lines":
        passages = [line.strip() for doc in docs for line in doc.text.splitlines() if line.strip()]
    else:
        chunks = docs.passages(parse_chunk_spec(REAL_CHUNKING))
        passages = [f"{p.title}\n{p.text}" if p.title else p.text for p in chunks]
    queries = [q.question for q in load_golden(demo_golden_path())][:N_QUERIES]
    words = " ".join(doc.text for doc in docs).split()
    return passages, queries + _cut_queries(words, N_QUERIES - len(queries), np.random.default_rng(seed))


def cpu_median(fn: Callable[[], Any], repeats: int = REPEATS) -> tuple[float, Any]:
    """(median CPU seconds, last output) of `repeats` calls."""
    times, out = [], None
    for _ in range(repeats):
        start = time.process_time()
        out = fn()
        times.append(time.process_time() - start)
    return statistics.median(times), out


class _Probe:
    """An object the garbage collector tracks, made after each timed call (see `alternating`)."""


def alternating(sides: dict[str, Callable[[], Any]], rounds: int = SEARCH_ROUNDS) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """CPU seconds of each side per round, one call of each per round, their order swapped every round,
    and each side's last output (kept alive until that side runs again, as a caller keeps its results:
    freeing the one before counts for its side). A collection of Python's garbage collector that a call
    leaves due (CPython starts one at the first allocation after enough objects were made: a `Run`'s
    100,000 pairs, made with the collector paused) runs in that call's time: one tracked object is made
    before the clock stops, else it fell in whichever side ran next."""
    times: dict[str, list[float]] = {name: [] for name in sides}
    outs: dict[str, Any] = dict.fromkeys(sides)
    for r in range(rounds):
        for name in list(sides)[:: 1 if r % 2 == 0 else -1]:
            start = time.process_time()
            outs[name] = sides[name]()
            _Probe()
            times[name].append(time.process_time() - start)
    return times, outs


def _bm25s_tokens(texts: list[str], ids: bool = True) -> Any:
    import bm25s
    import Stemmer

    return bm25s.tokenize(texts, stopwords="en", stemmer=Stemmer.Stemmer("english").stemWords, show_progress=False,
                          return_ids=ids)  # fmt: skip


def _bm25s_index(texts: list[str], backend: str) -> Any:
    import bm25s

    model = bm25s.BM25(backend=backend)
    model.index(_bm25s_tokens(texts), show_progress=False)
    return model


def _bm25s_search(model: Any, queries: list[str], k: int, ids: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """bm25s' tokenizing and search: each query's passages (`ids[i]`, else indices) and scores."""
    docs, scores = model.retrieve(_bm25s_tokens(queries, ids=False), corpus=ids, k=k, show_progress=False, n_threads=1)
    return docs, scores


def _ids(n: int) -> list[str]:
    return [f"p{i:05d}" for i in range(n)]


def _ours(passages: list[str]) -> Any:
    from goldeval.corpus.model import Passage
    from goldeval.retrievers.bm25 import BM25Retriever

    return BM25Retriever([Passage(i, i, t) for i, t in zip(_ids(len(passages)), passages, strict=True)])


def same_top10(run: Any, docs: np.ndarray, scores: np.ndarray) -> float:
    """Share of queries whose top 10 (passages with a positive score, ties at the cut aside) are bm25s'
    passages with bm25s' float32 scores, bit for bit."""
    same = 0
    for row, qid in enumerate(run.results):
        ours = dict(run.results[qid][:10])
        theirs = {str(d): float(s) for d, s in zip(docs[row][:10], scores[row][:10], strict=True) if s > 0}
        cut = min(list(ours.values()) + list(theirs.values()), default=0.0)
        same += {d: s for d, s in ours.items() if s > cut} == {d: s for d, s in theirs.items() if s > cut}
    return same / len(run.results)


def compare(passages: list[str], queries: list[str]) -> dict[str, Any]:
    """Index both (CPU medians), search alternately (warm, one thread, CPU seconds per round), and how
    many top 10s are the same: one process's measurements (`summarise` makes the row)."""
    index_ours, retriever = cpu_median(lambda: _ours(passages))
    index_bm25s, _ = cpu_median(lambda: _bm25s_index(passages, "numpy"))
    model, ids = _bm25s_index(passages, "numba"), np.array(_ids(len(passages)), dtype=object)
    asked = {f"q{i:04d}": q for i, q in enumerate(queries)}
    _bm25s_search(model, queries[:5], TOP_K, ids)  # numba compiles here, not in the timing
    retriever.search(dict(list(asked.items())[:5]), top_k=TOP_K)
    times, outs = alternating({"goldeval": lambda: retriever.search(asked, top_k=TOP_K),
                               "bm25s": lambda: _bm25s_search(model, queries, TOP_K, ids)})  # fmt: skip
    return {"passages": len(passages), "queries": len(queries), "index_cpu_s": {"goldeval": index_ours, "bm25s": index_bm25s},
            "search_cpu_s": times, "same_top10": same_top10(outs["goldeval"], *outs["bm25s"])}  # fmt: skip


def measure(unit: str) -> dict[str, Any]:
    """One input (`UNITS`) measured in this process, with what it is."""
    if unit == "cranfield":
        return {"corpus": f"{N_PASSAGES:,} passages cut from Cranfield, {N_QUERIES:,} queries, top {TOP_K}",
                **compare(*corpus())}  # fmt: skip
    passages, queries = python_docs(unit)
    if unit == "lines":
        no_words = sum(1 for t in passages if not re.search(r"(?u)\b\w\w+\b", t))
        what = f"{len(passages):,} lines of the Python docs (pydoc; {no_words:,} with no word)"
    else:
        what = f"{len(passages):,} passages of the Python docs (the demo's pydoc pages, --chunk {REAL_CHUNKING})"
    return {"corpus": f"{what}, {len(queries):,} queries, top {TOP_K}", **compare(passages, queries)}


def _fresh(unit: str) -> dict[str, Any]:
    """`measure(unit)` in a fresh process: what ran before in this one (another input's index, its garbage)
    changes how fast the next searches run, by more than the ratio's own noise."""
    code = f"import json; from bench.bench_bm25 import measure; print(json.dumps(measure({unit!r})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])  # fmt: skip
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One input's row from its processes: rates from the medians of every round of every process, the
    ratio of those medians, the median and range of the per-round ratios and each process's ratio."""
    n, q = runs[0]["passages"], runs[0]["queries"]
    ours = [t for r in runs for t in r["search_cpu_s"]["goldeval"]]
    theirs = [t for r in runs for t in r["search_cpu_s"]["bm25s"]]
    per_round = sorted(b / g for g, b in zip(ours, theirs, strict=True))
    index = {side: statistics.median(r["index_cpu_s"][side] for r in runs) for side in ("goldeval", "bm25s")}
    by_process = [statistics.median(r["search_cpu_s"]["bm25s"]) / statistics.median(r["search_cpu_s"]["goldeval"]) for r in runs]
    return {
        "corpus": runs[0]["corpus"],
        "index_docs_per_s": {"goldeval": round(n / index["goldeval"]), "bm25s": round(n / index["bm25s"])},
        "index_ratio": round(index["bm25s"] / index["goldeval"], 2),
        "queries_per_s": {"goldeval": round(q / statistics.median(ours)), "bm25s_numba_1_thread": round(q / statistics.median(theirs))},
        "query_ratio_vs_numba": round(statistics.median(theirs) / statistics.median(ours), 2),
        "query_ratio_per_round": {"median": round(statistics.median(per_round), 2), "low": round(per_round[0], 2),
                                  "high": round(per_round[-1], 2), "rounds": len(per_round)},
        "query_ratio_per_process": [round(r, 2) for r in by_process],
        "search_cpu_s": {"goldeval": [round(t, 4) for t in ours], "bm25s": [round(t, 4) for t in theirs]},
        "same_top10": min(r["same_top10"] for r in runs),
    }  # fmt: skip


def second_process(workspace: Path) -> float:
    """Seconds of the first search in a fresh process with the same workspace (no numba compile)."""
    code = ("import json, sys, time; from bench.bench_bm25 import corpus, _ours; p, q = corpus(5000); "
            "r = _ours(p); t = time.perf_counter(); r.search({str(i): x for i, x in enumerate(q[:10])}, top_k=10); "
            "print(json.dumps(time.perf_counter() - t))")  # fmt: skip
    env = {"GOLDEVAL_WORKSPACE": str(workspace), "PATH": "/usr/bin:/bin"}
    if os.environ.get("PYTHONPATH"):  # the goldeval being measured, not whichever the interpreter installed
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True,
                         cwd=Path(__file__).resolve().parents[1])  # fmt: skip
    return float(json.loads(out.stdout.strip().splitlines()[-1]))


def _print_row(title: str, r: dict[str, Any]) -> None:
    q, i, rounds = r["queries_per_s"], r["index_docs_per_s"], r["query_ratio_per_round"]
    print(f"BM25, {title}: {r['corpus']}")
    print(f"  queries   goldeval {q['goldeval']:>8,} q/CPU-s   bm25s numba (1 thread) {q['bm25s_numba_1_thread']:>8,} q/CPU-s"
          f"   ratio {r['query_ratio_vs_numba']:.2f}x (per process: {', '.join(f'{x:.2f}x' for x in r['query_ratio_per_process'])}; "
          f"per round: median {rounds['median']:.2f}x, {rounds['low']:.2f}-{rounds['high']:.2f}x over {rounds['rounds']})")  # fmt: skip
    print(f"  indexing  goldeval {i['goldeval']:>8,} docs/CPU-s bm25s {i['bm25s']:>8,} docs/CPU-s   ratio {r['index_ratio']:.2f}x;"
          f" same top 10 and scores as bm25s, bit for bit: {r['same_top10']:.1%} of queries")  # fmt: skip


def main() -> None:
    load = [round(x, 1) for x in os.getloadavg()]
    runs: dict[str, list[dict[str, Any]]] = {unit: [] for unit in UNITS}
    for _ in range(PROCESSES):  # the inputs in turn, each in a fresh process
        for unit in UNITS:
            runs[unit].append(_fresh(unit))
    result: dict[str, Any] = summarise(runs["cranfield"])
    _print_row("the easy inputs", result)
    with tempfile.TemporaryDirectory() as ws:
        second_process(Path(ws))  # fills the workspace's compile cache
        result["second_process_first_search_s"] = round(second_process(Path(ws)), 3)
    print(f"  a second process's first search: {result['second_process_first_search_s']:.3f} s")
    result["real"], result["real_lines"] = summarise(runs["chunks"]), summarise(runs["lines"])
    _print_row("real passages", result["real"])
    _print_row("real text, line by line", result["real_lines"])
    result["timing"] = (f"CPU seconds (time.process_time), one thread each, {SEARCH_ROUNDS} alternating rounds in each of "
                        f"{PROCESSES} fresh processes per input; load average {load[0]} at the start, "
                        f"{os.getloadavg()[0]:.1f} at the end")  # fmt: skip
    print(f"{result['timing']}\nwrote {write_results('bm25', result)}")


if __name__ == "__main__":
    main()
