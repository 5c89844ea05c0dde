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
