"""The first `make demo`: how long until its first scorecard, from an empty workspace and an empty user cache.

`make demo` runs `goldeval demo`; this runs the same command as its own process in an empty temp folder
with `GOLDEVAL_CACHE` pointing at an empty folder too, so nothing made earlier on this machine helps: the
stdlib corpus is rendered, the BM25 kernel compiled, every passage embedded (and, for minilm, its int8
copy made). Timed: the wall seconds until the scorecard's first line reaches stdout, the whole run, and the
CPU seconds of the process and its children. Issue 19: the first scorecard should appear in under a minute
on 2 cores.

Two commands: the demo as it ships (bm25, dense:wordllama, hybrid) and the one that adds the transformer
(`--retriever dense:minilm`, what the demo's last line tells how to add). Results: bench/results/demo.json.
On a machine shared with other work the wall times grow with its load (printed beside them); the CPU
seconds do not.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import write_results

COMMANDS = {
    "as shipped (bm25, dense:wordllama, hybrid)": [],
    "with minilm (bm25, dense:minilm, hybrid)": ["--retriever", "bm25", "--retriever", "dense:minilm",
                                                 "--retriever", "hybrid:bm25+dense:minilm"],
}
FIRST_LINE = "goldeval scorecard:"


def first_demo(extra: list[str]) -> dict[str, Any]:
    """One `goldeval demo --no-misses` from nothing: seconds to the first scorecard line, total, CPU."""
    with tempfile.TemporaryDirectory(prefix="goldeval-first-demo-") as folder:
        env = {**os.environ, "GOLDEVAL_CACHE": str(Path(folder) / "user-cache"), "GOLDEVAL_NO_HISTORY": "1"}
        env.pop("GOLDEVAL_WORKSPACE", None)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "goldeval", "demo", "--no-misses", *extra], cwd=folder,
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        first = None
        assert child.stdout is not None
        for line in child.stdout:
            if first is None and line.startswith(FIRST_LINE):
                first = time.perf_counter() - start
        code = child.wait()
        total = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"exit": code, "first_scorecard_s": round(first, 1) if first is not None else None,
            "total_s": round(total, 1), "cpu_s": round(cpu, 1)}


def main() -> None:
    rows: dict[str, Any] = {"cores": os.cpu_count(), "load_before": round(os.getloadavg()[0], 1)}
    for label, extra in COMMANDS.items():
        row = first_demo(extra)
        row["load_after"] = round(os.getloadavg()[0], 1)
        rows[label] = row
        print(f"first demo, {label}: scorecard after {row['first_scorecard_s']} s, done in {row['total_s']} s, "
              f"{row['cpu_s']} CPU s, exit {row['exit']} (load {rows['load_before']} -> {row['load_after']} on "
              f"{rows['cores']} cores)", flush=True)
    out = write_results("demo", rows)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
