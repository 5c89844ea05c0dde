"""Cranfield retrieval quality (bench/cranfield.py), written to bench/results/cranfield.json."""

from __future__ import annotations

import json
from pathlib import Path

from bench.cranfield import main as run_cranfield


def main() -> None:
    report = run_cranfield([])
    out = Path(__file__).resolve().parent / "results" / "cranfield.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
