"""Every dial in one sweep, on Cranfield: 12 configurations, a second run from the cache, then Ray.

    python examples/sweep_cranfield.py [--workers 2] [--workspace DIR] [--out DIR]

1. Runs the sweep of examples/sweep_cranfield.toml (2 chunkings x 2 models x 3 fusion weights) and prints
   the table: every configuration's nDCG@10 with its interval, which are within noise of the best, cost.
2. Runs it again: served from the workspace (nothing searched or embedded; only fusion and scoring).
3. With --workers N: runs it once more on a local Ray with N workers in a fresh workspace (so everything
   is embedded and searched again, on the workers) and checks the metrics are identical.
Writes sweep.json and sweep.html (the sweep view) into --out (default: .goldeval/sweep-cranfield).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from goldeval import load_golden
from goldeval.corpus import load_corpus
from goldeval.report import render_sweep, write_sweep_html
from goldeval.sweep import RayExecutor, SweepResult, load_sweep_file, sweep

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, help="also run on a local Ray with N workers and compare")
    parser.add_argument("--workspace", type=Path, default=Path(".goldeval"))
    parser.add_argument("--out", type=Path, default=Path(".goldeval/sweep-cranfield"))
    args = parser.parse_args()
    loaded = load_sweep_file(HERE / "sweep_cranfield.toml")
    assert loaded.settings.corpus is not None and loaded.settings.golden is not None
    corpus = load_corpus(loaded.settings.corpus)
    golden = load_golden(loaded.settings.golden, corpus=corpus)

    def run(workspace: Path, executor: RayExecutor | None = None) -> tuple[SweepResult, float]:
        started = time.perf_counter()
        result = sweep(loaded.grid, golden, corpus=corpus, settings=loaded.settings, workspace=workspace,
                       executor=executor, progress=True, record_history=False)
        return result, time.perf_counter() - started

    first, seconds = run(args.workspace)
    render_sweep(first)
    print(f"\nfirst run: {seconds:.1f}s, {first.stages['runs']['computed']} runs searched, "
          f"{first.stages['embeddings']['texts_embedded']} texts embedded")
    second, again = run(args.workspace)
    assert second.stages["runs"]["computed"] == 0 and second.stages["embeddings"]["texts_embedded"] == 0
    assert [c.metrics for c in second.cells] == [c.metrics for c in first.cells]
    print(f"second run: {again:.1f}s, served from the cache ({second.stages['runs']['cached']} stored runs)")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "sweep.json").write_text(json.dumps(first.to_dict(), indent=1), encoding="utf-8")
    write_sweep_html(first, args.out / "sweep.html")
    print(f"wrote {args.out / 'sweep.json'} and {args.out / 'sweep.html'}")
    if args.workers:
        with tempfile.TemporaryDirectory(prefix="gs-", dir="/tmp") as fresh:
            executor = RayExecutor(workers=args.workers, workspace=Path(fresh))
            try:
                on_ray, ray_seconds = run(Path(fresh), executor)
            finally:
                executor.close()
        same = [(c.label, c.metrics) for c in on_ray.cells] == [(c.label, c.metrics) for c in first.cells]
        print(f"--workers {args.workers} on Ray, fresh workspace: {ray_seconds:.1f}s "
              f"(stages {on_ray.stages['wall_seconds']}); metrics identical to one process: {same}")
        assert same


if __name__ == "__main__":
    main()
