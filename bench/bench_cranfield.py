"""Cranfield retrieval quality (bench/cranfield.py), written to bench/results/cranfield.json."""

from __future__ import annotations

from bench import write_results
from bench.cranfield import main as run_cranfield


def main() -> None:
    report = run_cranfield([])
    out = write_results("cranfield", report)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
