"""Benchmarks: each bench_<area>.py has a main() that times goldeval beside its peer tool, in one process,
prints the ratios and writes bench/results/<area>.json. Run them all with `python -m bench` (`make bench`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def write_results(area: str, data: Any) -> Path:
    """Write one benchmark's numbers to bench/results/<area>.json and return the path."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{area}.json"
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def own_peak_mb() -> float:
    """This process's own peak resident memory in MB: VmHWM, the high-water mark of its address space since
    it began. Not `ru_maxrss`: on Linux a child started by fork or vfork and exec inherits its parent's
    high-water mark there (exec keeps the old address space's peak), so a small command started by a large
    benchmark process would report the benchmark's peak as its own. Falls back to ru_maxrss where /proc
    has no VmHWM."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
