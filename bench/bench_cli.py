"""`goldeval --help` start-up (issue 22: under 0.3 s): the time a user waits before the list of commands.

Each run is a fresh `python -m goldeval --help` process, as a user starts it, so the wall time includes
Python's own start and every import; `python -c pass` beside it is the floor no CLI can go under. Medians
of REPEATS. The module count is what `python -X importtime` lists for the same command (every module
imported after the interpreter's start), with how many are goldeval's and whether a heavy one (numpy,
rich, the scorecard) came in. `goldeval eval --help` (one command's whole parser) is timed too.
Results: bench/results/cli.json. The target is checked here, never as a timed assertion in the tests
(tests/test_cli_startup.py checks only which modules `--help` imports).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from typing import Any

from bench import write_results

REPEATS = 9
TARGET_S = 0.3
HEAVY = ("numpy", "rich", "bm25s", "goldeval.scorecard", "goldeval.evaluation", "goldeval.retrievers")


def wall(args: list[str]) -> float:
    """Seconds one fresh `python ARGS` process takes, start to exit."""
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], capture_output=True, check=True)
    return time.perf_counter() - start


def imported(args: list[str]) -> list[str]:
    """The modules `python -X importtime ARGS` imports, in order (the names of its stderr report)."""
    done = subprocess.run([sys.executable, "-X", "importtime", *args], capture_output=True, text=True, check=True)
    rows = [line.split("|")[-1] for line in done.stderr.splitlines() if line.startswith("import time:")]
    return [row.strip() for row in rows[1:]]  # the first row is the header


def median_wall(args: list[str]) -> float:
    return statistics.median(wall(args) for _ in range(REPEATS))


def main() -> None:
    wall(["-m", "goldeval", "--help"])  # untimed: the first start reads the files into the page cache
    modules = imported(["-m", "goldeval", "--help"])
    result: dict[str, Any] = {
        "command": "python -m goldeval --help",
        "help_s": median_wall(["-m", "goldeval", "--help"]),
        "python_floor_s": median_wall(["-c", "pass"]),
        "eval_help_s": median_wall(["-m", "goldeval", "eval", "--help"]),
        "modules": len(modules),
        "goldeval_modules": sorted(m for m in modules if m.split(".")[0] == "goldeval"),
        "heavy_imported": sorted({h for h in HEAVY for m in modules if m == h or m.startswith(h + ".")}),
        "repeats": REPEATS,
        "target_s": TARGET_S,
        "load_average": os.getloadavg(),
    }
    result["under_target"] = result["help_s"] < TARGET_S
    print(f"cli: `goldeval --help` {result['help_s']:.3f} s (median of {REPEATS}; python itself "
          f"{result['python_floor_s']:.3f} s; target < {TARGET_S} s: {'met' if result['under_target'] else 'MISSED'}); "
          f"{result['modules']} modules imported, {len(result['goldeval_modules'])} of goldeval "
          f"({', '.join(result['goldeval_modules'])}); heavy: {', '.join(result['heavy_imported']) or 'none'}")
    print(f"cli: `goldeval eval --help` {result['eval_help_s']:.3f} s")
    print(f"wrote {write_results('cli', result)}")


if __name__ == "__main__":
    main()
