"""Re-running an unchanged sweep: `goldeval sweep examples/sweep_cranfield.toml` (12 configurations: 2
chunkings x 2 models x 3 fusion weights, 225 questions, 10,000 resamples) run again with nothing changed.

    python -m bench sweep_rerun

Each run is its own process, as a user runs it (Python's start and every import included). The workspace
is goldeval's default (`$GOLDEVAL_WORKSPACE`, else `.goldeval`); one untimed run first fills whatever it
lacks (about 4 minutes on an empty one: embedding). Then the re-run, 3 times: nothing searched, embedded or
resampled (issue 23: the statistics are kept by content), only fusion and scoring. The configurations'
metrics, intervals and tests must be the same in every run. Medians of 3; results:
bench/results/sweep_rerun.json.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import write_results
from bench.cranfield import DATA

REPEATS = 3
SWEEP = Path(__file__).resolve().parents[1] / "examples" / "sweep_cranfield.toml"


def timed(out: Path) -> tuple[float, list[Any], dict[str, Any]]:
    """(CPU seconds of the child, each configuration's numbers, the run's stages) of one `goldeval sweep`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "goldeval", "sweep", str(SWEEP), "--corpus", str(DATA), "--golden", str(DATA),
                    "--no-history", "--quiet", "--json", str(out)], capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    data = json.loads(out.read_text(encoding="utf-8"))
    cells = [(c["label"], c["metrics"], c["intervals"], c.get("vs_best")) for c in data["cells"]]
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), cells, data["stages"]


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "sweep.json"
        _, first, _ = timed(out)  # fills the workspace
        runs = [timed(out) for _ in range(REPEATS)]
    result = {
        "command": "goldeval sweep examples/sweep_cranfield.toml --no-history",
        "rerun_cpu_s": statistics.median(cpu for cpu, _, _ in runs),
        "statistics": runs[-1][2].get("statistics"),
        "runs": runs[-1][2].get("runs"),
        "same_numbers": all(cells == first for _, cells, _ in runs),
        "load_average": os.getloadavg(),
    }
    print(f"sweep_rerun: unchanged 12-configuration Cranfield sweep {result['rerun_cpu_s']:.2f} CPU s; "
          f"statistics {result['statistics']}; same numbers: {result['same_numbers']}")
    print(f"wrote {write_results('sweep_rerun', result)}")


if __name__ == "__main__":
    main()
