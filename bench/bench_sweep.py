"""Ray measured, not projected (issue 23): the 12-configuration Cranfield sweep in one process and on a
local Ray with 1 and with 2 workers, each from an empty workspace.

    python -m bench sweep                  # SWEEP_ROUNDS=3 rounds of the three modes (about 25 minutes here)
    SWEEP_ROUNDS=1 python -m bench sweep   # one round

The sweep: `goldeval sweep examples/sweep_cranfield.toml` (2 chunkings x minilm-l3 and wordllama x bm25
weights 0.3, 0.5, 0.7: 12 configurations, 6 base runs, about 13,600 texts to embed, 225 questions, 10,000
resamples) with `--corpus`/`--golden` at Cranfield, as tests/test_sweep_ray_cranfield.py runs it. Each run
is its own `python -m goldeval sweep` process, as a user runs it (Python's start, imports and Ray's start
included), in its own empty workspace, so every mode embeds and searches everything. The modes alternate
within each round, in the opposite order every other round, so a change in the machine's load falls on
all three.

Measured per run:
- wall seconds, end to end;
- CPU seconds of the whole process tree: the command, and for Ray its servers and workers, which are not
  the command's children (`getrusage` never sees them), so each process's CPU time is read from /proc
  every `SAMPLE_S` while the command runs; a process's last fraction of a sample is missed (a lower bound
  by at most about SAMPLE_S per process; one process, or about ten for Ray). The command's own
  `getrusage` (`own_cpu_s`) is kept beside it as a check;
- the stages' wall seconds from the sweep's JSON (`stages.wall_seconds`: embed, search, score).
Ratios, medians over the rounds (and their range): 2 workers against one process (what `--workers 2`
buys a user), 2 workers against 1 (how Ray's stages scale), 1 worker against one process (what Ray's
tasks and single-threaded models cost). The configurations' metrics, intervals and tests against the best
must be identical in every run (the test asserts it; here it is reported).
Nothing is asserted about time: the machine is shared, and its load average before and after each run is
kept with the numbers. Results: bench/results/sweep.json.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.cranfield import DATA

SWEEP = Path(__file__).resolve().parents[1] / "examples" / "sweep_cranfield.toml"
MODES: dict[str, list[str]] = {"one process": [], "ray, 1 worker": ["--workers", "1"],
                               "ray, 2 workers": ["--workers", "2"]}
INPUTS = ["--corpus", str(DATA), "--golden", str(DATA)]
ROUNDS = int(os.environ.get("SWEEP_ROUNDS", "3"))
SAMPLE_S = 0.25
TICKS = os.sysconf("SC_CLK_TCK")


def _proc_table() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds so far: user + system, all threads) of every process readable now."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:  # gone since listdir
            continue
        fields = stat[stat.rfind(")") + 2:].split()  # after "pid (comm) ": state, ppid, ... utime stime
        table[int(name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS)
    return table


class TreeCPU:
    """CPU seconds of a process and all its descendants, read from /proc every SAMPLE_S in a thread."""

    def __init__(self, root: int) -> None:
        self.root, self.seen = root, {root: 0.0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            table = _proc_table()
            tree, grew = {self.root} | set(self.seen), True
            while grew:  # descendants: children of anything in the tree (a pid reused elsewhere is unlikely)
                new = {pid for pid, (parent, _) in table.items() if parent in tree and pid not in tree}
                tree |= new
                grew = bool(new)
            for pid in tree & table.keys():
                self.seen[pid] = table[pid][1]
            self._stop.wait(SAMPLE_S)

    def stop(self) -> tuple[float, int]:
        """(CPU seconds of every process seen, how many processes)."""
        self._stop.set()
        self._thread.join()
        return sum(self.seen.values()), len(self.seen)


def one(mode: str) -> dict[str, Any]:
    """One `goldeval sweep` of SWEEP in a fresh process and an empty workspace, in `mode`."""
    folder = Path(tempfile.mkdtemp(prefix="gs-bench-", dir="/tmp"))  # short: Ray's sockets live under it
    out = folder / "sweep.json"
    command = [sys.executable, "-m", "goldeval", "sweep", str(SWEEP), *INPUTS,
               "--workspace", str(folder / "ws"), "--json", str(out), "--no-history", "--quiet", *MODES[mode]]
    load_before = os.getloadavg()[0]
    try:
        started = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        tree = TreeCPU(child.pid)
        stderr = child.stderr.read() if child.stderr else ""
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        cpu, processes = tree.stop()
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(command)} failed:\n{stderr[-3000:]}")
        data = json.loads(out.read_text(encoding="utf-8"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    stages = data["stages"]
    return {
        "mode": mode, "wall_s": wall, "cpu_s": cpu, "own_cpu_s": usage.ru_utime + usage.ru_stime,
        "processes": processes, "load_before": load_before, "load_after": os.getloadavg()[0],
        "stage_wall_s": {k: stages["wall_seconds"].get(k, 0.0) for k in ("embed", "search", "score")},
        "configurations": len(data["cells"]), "runs_computed": stages["runs"]["computed"],
        "texts_embedded": stages["embeddings"]["texts_embedded"], "executor": data["identity"]["executor"],
        "standing": [(c["label"], c["metrics"], c["intervals"], c["vs_best"]) for c in data["cells"]],
    }


def _ratio(runs: dict[str, list[dict[str, Any]]], top: str, bottom: str, key: str, stage: str | None = None) -> dict[str, Any]:
    """Per round, `top`'s value over `bottom`'s (wall, CPU or a stage's wall); their median and range."""
    def value(row: dict[str, Any]) -> float:
        return float(row["stage_wall_s"][stage] if stage else row[key])

    per_round = [value(a) / value(b) for a, b in zip(runs[top], runs[bottom], strict=True)]
    return {"median": statistics.median(per_round), "min": min(per_round), "max": max(per_round),
            "rounds": per_round}


def summarise(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Medians per mode and the ratios (each read as "x times faster" or "x times the CPU")."""
    one_p, w1, w2 = "one process", "ray, 1 worker", "ray, 2 workers"
    medians = {mode: {"wall_s": statistics.median(r["wall_s"] for r in rows),
                      "cpu_s": statistics.median(r["cpu_s"] for r in rows),
                      "own_cpu_s": statistics.median(r["own_cpu_s"] for r in rows),
                      **{f"{s}_s": statistics.median(r["stage_wall_s"][s] for r in rows) for s in ("embed", "search", "score")}}
               for mode, rows in runs.items()}
    ratios = {
        "speedup_2_workers_vs_one_process": _ratio(runs, one_p, w2, "wall_s"),
        "cpu_2_workers_vs_one_process": _ratio(runs, w2, one_p, "cpu_s"),
        "speedup_2_vs_1_worker": _ratio(runs, w1, w2, "wall_s"),
        "embed_speedup_2_vs_1_worker": _ratio(runs, w1, w2, "", "embed"),
        "search_speedup_2_vs_1_worker": _ratio(runs, w1, w2, "", "search"),
        "speedup_1_worker_vs_one_process": _ratio(runs, one_p, w1, "wall_s"),
    }
    return {"medians": medians, "ratios": ratios}


def main() -> None:
    from bench import write_results

    runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    first: list[Any] | None = None
    identical = True
    print(f"`goldeval sweep {SWEEP.name}` from an empty workspace, fresh processes, {ROUNDS} round(s); "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}", flush=True)
    for round_ in range(ROUNDS):
        for mode in (list(MODES) if round_ % 2 == 0 else list(reversed(MODES))):
            row = one(mode)
            first = first if first is not None else row["standing"]
            identical = identical and row.pop("standing") == first
            runs[mode].append(row)
            stage = row["stage_wall_s"]
            print(f"round {round_ + 1} {mode:<15} wall {row['wall_s']:6.1f} s  CPU {row['cpu_s']:6.1f} s "
                  f"({row['processes']} processes)  embed {stage['embed']:5.1f} s  search {stage['search']:5.1f} s  "
                  f"score {stage['score']:4.1f} s  load {row['load_before']:.1f} -> {row['load_after']:.1f}", flush=True)
    summary = summarise(runs)
    for name, ratio in summary["ratios"].items():
        print(f"{name}: {ratio['median']:.2f}x (rounds {ratio['min']:.2f}-{ratio['max']:.2f})")
    print(f"metrics, intervals and tests against the best identical in every run: {identical}")
    loads = [v for rows in runs.values() for r in rows for v in (r["load_before"], r["load_after"])]
    path = write_results("sweep", {
        "sweep": f"goldeval sweep examples/{SWEEP.name}", "cores": os.cpu_count(), "rounds": ROUNDS,
        "load_average": [min(loads), max(loads)], "configurations": runs["one process"][0]["configurations"],
        "texts_embedded": runs["one process"][0]["texts_embedded"], "runs": runs, **summary,
        "metrics_identical": identical})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
