"""`goldeval eval --retriever run:FILE --no-stats` beside `goldeval trec` on the same data (issue 23).

    python -m bench eval                        # 10k and 100k questions (make bench)
    EVAL_SIZES=10000,100000,1000000 python -m bench eval   # and 1M (minutes, 7 GB of files)
    python -m bench.bench_eval write 10000 DIR  # the files only: DIR/golden.jsonl, qrels.txt, run.trec
    EVAL_INPUTS=DIR python -m bench eval        # the files of each size in DIR/<size>/, written once, kept

Realistic inputs, as a user has them: a golden set in JSONL (1-5 graded expected documents per question,
two judged-not-relevant ones), a TREC run of 100 results per question with scores written by Python in
full precision (`f"{x}"`, 16 or 17 digits) and the same judgments as TREC qrels. `eval` reads the golden set
and the run, scores every question (curves, judged@k, ranges, bpref, the per-question records) and writes
the results JSON; `trec` reads qrels and run and prints the same measures per question (`-q`). Each
command runs in a fresh process (`python -m goldeval ...`, through `CHILD`), so the times include imports
and the peak memory is its own (`bench.own_peak_mb`, which the child reports at exit: `timed_child` says why
not ru_maxrss); medians of REPEATS, the three commands interleaved: `eval` with the history off (GOLDEVAL_NO_HISTORY=1, as `trec` has none), `eval` as a user runs it
by default, recording its run in the workspace's history, and `trec`. Prints the ratios eval / trec (CPU
seconds: the machine is shared), each command's user and system CPU apart, how they grow from one size to
the next, and beside their system CPU what this machine charges per GB a process touches (`memory_price`, a
probe after each round: on the shared VM first touching memory in the huge pages numpy asks for costs seconds
of system CPU per GB, in ordinary pages about 0.3 s), and writes bench/results/eval.json.
"""

from __future__ import annotations

import compileall
import importlib.util
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench import RESULTS_DIR, write_results

SIZES = tuple(int(n) for n in os.environ.get("EVAL_SIZES", "10000,100000").split(","))
N_RESULTS = 100
COLLECTION = 1_000_000
REPEATS = int(os.environ.get("EVAL_REPEATS", "3"))
TREC_MEASURES = ["-m", "success.1,5,10", "-m", "recall.1,5,10", "-m", "P.1,5,10", "-m", "recip_rank",
                 "-m", "ndcg_cut.1,5,10", "-m", "map", "-m", "bpref"]


def write_inputs(n: int, folder: Path, seed: int = 3) -> tuple[Path, Path, Path]:
    """golden.jsonl, qrels.txt and run.trec for `n` questions in `folder`, written in blocks."""
    rng = np.random.default_rng(seed)
    golden, qrels, run = folder / "golden.jsonl", folder / "qrels.txt", folder / "run.trec"
    with golden.open("w") as g, qrels.open("w") as q, run.open("w") as r:
        for start in range(0, n, 10_000):
            block = min(10_000, n - start)
            ids = rng.integers(0, COLLECTION, size=(block, N_RESULTS))
            scores = (-np.sort(-rng.gamma(4.0, 3.0, size=(block, N_RESULTS)), axis=1)).tolist()
            n_rel = rng.integers(1, 6, size=block).tolist()
            grades = rng.integers(1, 4, size=(block, 5)).tolist()
            retrieved = (rng.random((block, 5)) < 0.7).tolist()
            picks = rng.integers(0, N_RESULTS, size=(block, 7)).tolist()
            names = [[f"msmarco_doc_{x % 60:02d}_{x * 7919 % 10**9:09d}" for x in row] for row in ids.tolist()]
            for i in range(block):
                qid, docs = f"q{start + i:07d}", names[i]
                expected: dict[str, int] = {}
                for j in range(n_rel[i]):
                    expected[docs[picks[i][j]] if retrieved[i][j] else f"msmarco_doc_99_{start + i:07d}{j}"] = grades[i][j]
                nonrel = {d: 0 for d in (docs[picks[i][5]], docs[picks[i][6]]) if d not in expected}
                g.write(json.dumps({"id": qid, "question": f"question number {start + i} about {docs[0]}?",
                                    "expected": expected, "judgments": [{"doc": d, "grade": 0} for d in nonrel]}) + "\n")
                q.writelines(f"{qid} 0 {d} {grade}\n" for d, grade in {**expected, **nonrel}.items())
                seen: set[str] = set()
                r.writelines(f"{qid} Q0 {d} {rank} {s} bench\n" for rank, (d, s) in enumerate(zip(docs, scores[i], strict=True), 1)
                             if not (d in seen or seen.add(d)))  # type: ignore[func-returns-value]
    return golden, qrels, run


PEAK_FILE = "GOLDEVAL_BENCH_PEAK"
"""Where the child writes its own peak resident memory (`CHILD`)."""
CHILD = """
import atexit, os, runpy, sys

from bench import own_peak_mb

def peak():
    with open(os.environ["GOLDEVAL_BENCH_PEAK"], "w") as out:
        out.write(repr(own_peak_mb()))

atexit.register(peak)
sys.argv = ["goldeval", *sys.argv[1:]]
runpy.run_module("goldeval", run_name="__main__", alter_sys=True)
"""
"""`python -m goldeval ARGS` that writes its own peak memory (`bench.own_peak_mb`, MB) at exit to the file
$GOLDEVAL_BENCH_PEAK."""


def timed_child(args: list[str], *, history: bool = False) -> dict[str, float]:
    """Wall seconds, CPU seconds and peak memory (MB) of `python -m goldeval ARGS` in a fresh process. The CPU
    is the child's own rusage (`os.wait4`); the peak is what the child itself reports at exit (`CHILD`:
    `bench.own_peak_mb`), because on Linux a child's `ru_maxrss` starts from its parent's peak, so it read the
    bench process's own peak whenever that was the larger. The history is off unless `history`."""
    with tempfile.TemporaryDirectory() as tmp:
        peak_file = Path(tmp) / "peak"
        env = {**os.environ, "GOLDEVAL_NO_HISTORY": "0" if history else "1", PEAK_FILE: str(peak_file)}
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-c", CHILD, *args], env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, cwd=Path(__file__).resolve().parents[1])  # fmt: skip
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            raise SystemExit(f"goldeval {' '.join(args)} exited {child.returncode}")
        peak_mb = float(peak_file.read_text())
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "user_s": usage.ru_utime, "sys_s": usage.ru_stime,
            "minor_faults": usage.ru_minflt, "peak_mb": peak_mb, "parent_view_peak_mb": usage.ru_maxrss / 1024}


PROBE = """
import contextlib, json, resource, sys

import numpy as np

from goldeval.memory import small_pages_only

def system_s():
    return resource.getrusage(resource.RUSAGE_SELF).ru_stime

def touched(count):
    start = system_s()
    pages = np.ones(count)
    return system_s() - start, pages

count = int(float(sys.argv[1]) * 2**30) // 8
with contextlib.nullcontext() if int(sys.argv[2]) else small_pages_only():  # numpy's default pages, or goldeval's
    start = system_s()
    with open(sys.argv[3], "wb") as out:  # first, the page cache a file as large takes, as a results file's does
        block = b"x" * (1 << 20)
        for _ in range(count * 8 >> 20):
            out.write(block)
    write = system_s() - start
    cold, pages = touched(count)  # first touch: pages this process never had
    del pages
    warm, pages = touched(count)  # the same amount again, at once: pages the process just gave back
print(json.dumps({"cold": cold, "warm": warm, "write": write}))
"""
"""A child that writes GB to a file, then touches as much new memory twice, in huge pages or not, and prints the
system CPU of each."""


def memory_price(gb: float = 1.0, rest_s: float = 3.0) -> dict[str, float]:
    """What this machine's kernel charges a process, in system CPU seconds per GB, to touch memory for the
    first time, after its free memory has rested `rest_s`: in the transparent huge pages numpy asks for
    (`cold_huge`; where the kernel compacts memory to make them, or a VM's host took back the free 2 MB blocks
    they are made of, as this one's balloon does, seconds per GB) and in ordinary 4 KiB pages (`cold`: what
    goldeval's commands use, `goldeval.memory.small_pages_only`); `warm`, the same amount again at once; and
    `write`, writing as many bytes to a file (its page cache: on this VM's kernel, whose ext4 caches a file in
    large folios, the same price as huge pages). A command's system CPU is mostly these prices times the memory
    it touches and the bytes it writes (`growth`)."""
    prices = {}
    with tempfile.TemporaryDirectory() as tmp:
        for huge in (True, False):
            time.sleep(rest_s)
            out = subprocess.run([sys.executable, "-c", PROBE, str(gb), str(int(huge)), str(Path(tmp) / f"written{huge}")],
                                 capture_output=True, text=True, check=True)  # fmt: skip
            prices[huge] = json.loads(out.stdout)
    return {"cold_huge": prices[True]["cold"] / gb, "cold": prices[False]["cold"] / gb,
            "warm": prices[False]["warm"] / gb, "write": (prices[True]["write"] + prices[False]["write"]) / 2 / gb}


TOOLS = ("eval", "eval_history", "trec")
"""The commands timed: eval with the history off, eval with it on (the default), trec."""


def measure(n: int) -> dict[str, Any]:
    kept = os.environ.get("EVAL_INPUTS")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(kept) / str(n) if kept else Path(tmp)
        names = [folder / name for name in ("golden.jsonl", "qrels.txt", "run.trec")]
        if all(path.exists() for path in names):
            golden, qrels, run = names
        else:
            folder.mkdir(parents=True, exist_ok=True)
            golden, qrels, run = write_inputs(n, folder)
        out, workspace = Path(tmp), Path(tmp) / "ws"
        eval_args = ["eval", "--golden", str(golden), "--retriever", f"run:{run}", "--no-stats", "--quiet",
                     "--workspace", str(workspace), "--json", str(out / "results.json")]
        trec_args = ["trec", "-q", *TREC_MEASURES, str(qrels), str(run)]
        times: dict[str, list[dict[str, float]]] = {tool: [] for tool in TOOLS}
        prices: list[dict[str, float]] = []
        for _ in range(REPEATS):
            times["eval"].append(timed_child(eval_args))
            times["eval_history"].append(timed_child(eval_args, history=True))
            times["trec"].append(timed_child(trec_args))
            prices.append(memory_price())
        row: dict[str, Any] = {"questions": n, "run_mb": round(run.stat().st_size / 1e6, 1)}
        for kind in ("cold_huge", "cold", "warm", "write"):  # system s per GB, this round's machine (`memory_price`)
            row[f"memory_{kind}_sys_s_per_gb"] = statistics.median(p[kind] for p in prices)
        for tool in TOOLS:
            row[f"{tool}_s"] = statistics.median(t["wall_s"] for t in times[tool])
            row[f"{tool}_cpu_s"] = statistics.median(t["cpu_s"] for t in times[tool])
            for part in ("user_s", "sys_s", "minor_faults"):  # where CPU goes: Python's work, or the kernel's pages
                row[f"{tool}_{part}"] = statistics.median(t[part] for t in times[tool])
            row[f"{tool}_peak_mb"] = max(t["peak_mb"] for t in times[tool])
    row["ratio"] = row["eval_s"] / row["trec_s"]
    row["cpu_ratio"] = row["eval_cpu_s"] / row["trec_cpu_s"]
    row["history_cpu_ratio"] = row["eval_history_cpu_s"] / row["trec_cpu_s"]
    return row


def compile_goldeval() -> Path:
    """Compile goldeval's modules to bytecode where Python looks for it (their `__pycache__`), as pip does when it
    installs a package: a user's first run reads bytecode. A source tree run under PYTHONDONTWRITEBYTECODE (as on
    the shared machine) would compile every goldeval module again in every timed process, and `eval` imports
    twice the modules `trec` does. Returns the package folder compiled."""
    spec = importlib.util.find_spec("goldeval")
    if spec is None or spec.origin is None:
        raise SystemExit("goldeval is not importable")
    folder = Path(spec.origin).parent
    if not compileall.compile_dir(str(folder), quiet=1):
        raise SystemExit(f"cannot compile {folder}")
    return folder


GROWTH_PARTS = ("cpu_s", "user_s", "sys_s", "minor_faults")
"""What `growth` compares: a command's CPU, its user part (Python's and the kernels' work), its system part (the
OS's, mostly faulting memory in) and its page faults."""


def growth(rows: list[dict[str, Any]]) -> list[tuple[int, int, dict[str, dict[str, float]]]]:
    """(questions, the next size's questions, how each command's cost grew: tool -> part -> ratio) from each size
    measured to the next, rows in size order; rows without the split (measured before it was kept) are left out.
    Linear is the ratio of the sizes (10x). `main` prints it, `bench.table` writes it in its eval row."""
    kept = [row for row in rows if "eval_user_s" in row]
    return [(a["questions"], b["questions"], {tool: {part: b[f"{tool}_{part}"] / max(a[f"{tool}_{part}"], 1e-9)
                                                     for part in GROWTH_PARTS} for tool in ("eval", "trec")})
            for a, b in itertools.pairwise(kept)]  # fmt: skip


def memory_line(row: dict[str, Any]) -> str:
    """What this machine charges per GB of memory touched and of file written (`memory_price`) beside each
    command's system CPU, or "" for a row measured before the prices were kept."""
    if "memory_write_sys_s_per_gb" not in row:
        return ""
    return (f"system CPU: eval {row['eval_sys_s']:.1f} s, trec {row['trec_sys_s']:.1f} s; this machine charges per GB "
            f"a process touches first {row['memory_cold_sys_s_per_gb']:.2f} s in ordinary pages (goldeval's) and "
            f"{row['memory_cold_huge_sys_s_per_gb']:.2f} s in huge pages (numpy's default), and "
            f"{row['memory_write_sys_s_per_gb']:.2f} s per GB written to a file (a probe)")


def scaling(rows: dict[str, Any]) -> str:
    """`growth` of every size measured, a line per step."""
    lines = [f"  {small:,} -> {large:,} questions ({large / small:.0f}x): " + "; ".join(
        f"{tool} CPU {r['cpu_s']:.1f}x (user {r['user_s']:.1f}x, system {r['sys_s']:.1f}x, page faults "
        f"{r['minor_faults']:.1f}x)" for tool, r in grew.items())
        for small, large, grew in growth([rows[n] for n in sorted(rows, key=int)])]
    return "\n".join(lines) if lines else "  (no two sizes with user and system time apart yet)"


def main() -> None:
    print(f"bytecode of {compile_goldeval()} compiled first, as an install does")
    print(f"`goldeval eval --retriever run:FILE --no-stats --json OUT` (history off, then on) beside `goldeval trec -q` "
          f"on the same judgments and run ({N_RESULTS} results per question, 17-digit scores); fresh processes "
          f"interleaved, medians of {REPEATS}.")
    kept = RESULTS_DIR / "eval.json"  # sizes measured before and not now stay (EVAL_SIZES=1000000 adds 1M)
    rows: dict[str, Any] = json.loads(kept.read_text()) if kept.exists() else {}
    for n in SIZES:
        row = rows[str(n)] = measure(n)
        print(f"{n:>9,} questions ({row['run_mb']} MB run)  eval CPU {row['eval_cpu_s']:.2f} s, peak "
              f"{row['eval_peak_mb']:,.0f} MB; with the history CPU {row['eval_history_cpu_s']:.2f} s, peak "
              f"{row['eval_history_peak_mb']:,.0f} MB   trec CPU {row['trec_cpu_s']:.2f} s, peak {row['trec_peak_mb']:,.0f} MB"
              f"   eval / trec = {row['cpu_ratio']:.2f}x CPU ({row['history_cpu_ratio']:.2f}x with the history; wall "
              f"{row['ratio']:.2f}x)\n{'':>20}{memory_line(row)}", flush=True)
    print(scaling(rows))
    print(f"wrote {write_results('eval', dict(sorted(rows.items(), key=lambda item: int(item[0]))))}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "write":
        Path(sys.argv[3]).mkdir(parents=True, exist_ok=True)
        print(*write_inputs(int(sys.argv[2]), Path(sys.argv[3])))
    else:
        main()
