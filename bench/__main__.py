"""Run every bench/bench_*.py `main()`, or only those named: `python -m bench [metrics corpus ...]`."""

from __future__ import annotations

import importlib
import sys
import time
import traceback
from pathlib import Path

ON_REQUEST = {"bench_scale", "bench_sweep"}
"""Run only when named (`python -m bench scale sweep`): too long for every `make bench` (1M passages and
vectors; the 12-configuration Cranfield sweep from an empty workspace nine times: 3 rounds of one process,
Ray with 1 worker and with 2). Their rows in the tables come from their last results."""


def discover(names: list[str]) -> list[str]:
    """Module names `bench.bench_<area>`, all of them but ON_REQUEST, or the areas in `names` (with or without `bench_`)."""
    found = sorted(p.stem for p in Path(__file__).resolve().parent.glob("bench_*.py"))
    if not names:
        return [f for f in found if f not in ON_REQUEST]
    wanted = [n if n.startswith("bench_") else f"bench_{n}" for n in names]
    unknown = [w for w in wanted if w not in found]
    if unknown:
        raise SystemExit(f"no such benchmark: {', '.join(unknown)}; available: {', '.join(found)}")
    return wanted


def main(argv: list[str] | None = None) -> int:
    failed = []
    for name in discover(sys.argv[1:] if argv is None else argv):
        print(f"== {name} ==", flush=True)
        start = time.perf_counter()
        try:
            importlib.import_module(f"bench.{name}").main()
        except Exception:  # one broken benchmark must not hide the others' numbers
            traceback.print_exc()
            failed.append(name)
        print(f"== {name}: {time.perf_counter() - start:.1f}s ==\n", flush=True)
    from bench.table import main as print_tables

    print_tables()
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
