"""Ray measured on the real sweep (issue 23): `goldeval sweep examples/sweep_cranfield.toml --workers 2`
(12 configurations: 2 chunkings x minilm-l3 and wordllama x 3 fusion weights, on Cranfield's 1,400
abstracts and 225 questions, 10,000 resamples) gives one process's metrics, intervals and p-values,
configuration by configuration.

Each side runs as a user runs it, `python -m goldeval sweep` in its own process, from its own empty
workspace, so both embed the whole collection (about 13,600 texts) and search every base run: the workers
really embed. The example's own grid is run, with only `--corpus`/`--golden` pointed at
../shared/data/cranfield (tests read it there, never copy it).

What it costs the suite: two full sweeps, about 135 CPU seconds in all (Ray's workers included) and 4 to 5
minutes of wall time on the shared 2-core machine (measured twice: 303 s at load average 2 to 11, 224 s at
7 to 12). That is the honest size of the check: fewer questions or configurations would not be the sweep
the issue names. The single-process side is one module fixture, so any further check of the same sweep
here compares with it instead of sweeping again.

On a loaded machine: Ray's memory monitor kills a task's worker when the node runs short of memory; Ray
reruns a task killed that way (on its own count of such reruns, `RAY_task_oom_retries`), and goldeval reruns
one whose worker died otherwise (WORKER_RETRIES, tests/test_ray_worker_deaths.py), so a killed worker costs
time, not the test. Time limits guard against a hang only (hang_guard.py): a sweep says what it does on
stderr as it goes (each stage, and a progress line every 15 s while shards finish), so a run is called hung
when it has printed nothing for HANG_GUARD seconds, never for being slow overall.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hang_guard import HANG_GUARD

pytestmark = [pytest.mark.ray, pytest.mark.models]  # Ray workers embedding with the offline models

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "sweep_cranfield.toml"
CRANFIELD = ROOT.parent / "shared" / "data" / "cranfield"


def run_sweep(folder: Path, *extra: str) -> dict[str, Any]:
    """`goldeval sweep examples/sweep_cranfield.toml` on Cranfield in a fresh process and an empty workspace
    under `folder`; the JSON it wrote."""
    out = folder / "sweep.json"
    command = [sys.executable, "-m", "goldeval", "sweep", str(EXAMPLE), "--corpus", str(CRANFIELD),
               "--golden", str(CRANFIELD), "--workspace", str(folder / "ws"), "--json", str(out),
               "--no-history", *extra]
    code, stderr = _run_watched(command)
    assert code == 0, stderr[-3000:]
    return dict(json.loads(out.read_text(encoding="utf-8")))


def _run_watched(command: list[str]) -> tuple[int, str]:
    """Run `command`, failing it as hung only after HANG_GUARD seconds with no line on stderr (the sweep's
    stages and progress lines); (exit code, everything it printed there)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    assert child.stderr is not None
    lines: list[str] = []
    last = [time.monotonic()]

    def read() -> None:
        assert child.stderr is not None
        for line in child.stderr:
            lines.append(line)
            last[0] = time.monotonic()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    while child.poll() is None:
        if time.monotonic() - last[0] > HANG_GUARD:
            child.kill()
            child.wait()
            pytest.fail(f"goldeval sweep printed nothing for {HANG_GUARD:.0f} s; last lines:\n" + "".join(lines[-20:]))
        time.sleep(1.0)
    reader.join(HANG_GUARD)
    return child.returncode, "".join(lines)


def standing(data: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Each configuration, best first: its label, every metric, every interval, and its test against the best
    (difference, interval, p, Holm's p, test, within noise, verdict)."""
    return [(c["label"], c["metrics"], c["intervals"], c["vs_best"]) for c in data["cells"]]


@pytest.fixture(scope="module")
def one_process(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The sweep in one process: the baseline every check in this module compares with, swept once."""
    return run_sweep(tmp_path_factory.mktemp("one"))


def test_workers_2_gives_the_metrics_intervals_and_p_values_of_one_process(
        one_process: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> None:
    on_ray = run_sweep(tmp_path_factory.mktemp("ray"), "--workers", "2")
    assert on_ray["identity"]["workers"] == 2 and one_process["identity"]["workers"] == 1
    assert "Ray" in on_ray["identity"]["executor"]
    # the example's grid, whole: 2 chunkings x 2 models x 3 weights, each on all 225 questions
    assert len(one_process["cells"]) == 12
    assert {c["dials"]["chunking"] for c in one_process["cells"]} == {"none", "500:100"}
    assert {c["dials"]["model"] for c in one_process["cells"]} == {"minilm-l3", "wordllama"}
    assert {c["dials"]["weight"] for c in one_process["cells"]} == {0.3, 0.5, 0.7}
    assert one_process["identity"]["golden"]["n_questions"] == 225
    assert one_process["statistics"]["resamples"] == 10_000
    # both started empty: each embedded and searched everything itself, the workers as much as one process
    for data in (one_process, on_ray):
        assert data["stages"]["runs"]["cached"] == 0 and data["stages"]["statistics"] == {"computed": 1}
        assert data["stages"]["embeddings"]["embedded_while_searching"] == 0
    assert on_ray["stages"]["runs"] == one_process["stages"]["runs"]
    assert on_ray["stages"]["runs"]["computed"] == 6  # bm25, minilm-l3, wordllama per chunking
    embedded = one_process["stages"]["embeddings"]["texts_embedded"]
    assert embedded > 10_000 and on_ray["stages"]["embeddings"]["texts_embedded"] == embedded
    assert on_ray["stages"]["embeddings"]["shards"] > 2  # cut for 2 workers, not one shard per model
    # the same numbers, to the bit: every metric, interval and test against the best, the same best, the
    # same order, and so the same heatmaps
    assert standing(on_ray) == standing(one_process)
    assert on_ray["best"] == one_process["best"]
    assert on_ray["heatmaps"] == one_process["heatmaps"]
    # not a sweep whose numbers all tie: its configurations differ, and some beyond noise
    assert len({json.dumps(c["metrics"]) for c in one_process["cells"]}) == 12
    assert any(c["vs_best"] and not c["vs_best"]["within_noise"] for c in one_process["cells"])
