"""Sweep stages on Ray: `--workers 2` (a local Ray) and `--ray-address` (joining a running cluster) give
the same metrics as one process, and the workers' embeddings land in the shared embedding cache."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from goldeval.retrievers.dense import passage_text
from goldeval.retrievers.encoders.registry import load_encoder
from goldeval.store.cache import EmbeddingCache, read_entry
from goldeval.store.workspace import Workspace
from goldeval.sweep import Grid, RayExecutor, Settings, SweepResult, sweep
from hang_guard import HANG_GUARD
from sweep_fixtures import tiny_corpus, tiny_golden, write_inputs

pytestmark = [pytest.mark.ray, pytest.mark.models]  # Ray workers embedding with the offline models

GRID = Grid(chunking=("none", "120:30"), retriever=("bm25", "hybrid"), model=("wordllama", "minilm-l3"),
            fusion=("norm",), weight=(0.3,), rerank=(0, 5), reranker="dense:minilm-l3")
SETTINGS = Settings(k=(1, 3, 5), headline="ndcg@5", resamples=500)


def scores(result: SweepResult) -> list[tuple[str, object, object, object]]:
    return [(c.label, c.metrics, c.intervals, c.vs_best.p if c.vs_best else None) for c in result.cells]


def vectors(workspace: Path) -> dict[tuple[str, bytes], bytes]:
    """Every vector in a workspace's embedding cache, by model folder and text hash."""
    out = {}
    for path in (workspace / "embeddings").glob("*/*.gsemb"):
        entry = read_entry(path)
        assert entry is not None
        for text_hash, vector in zip(*entry, strict=True):
            out[(path.parent.name, text_hash)] = vector.tobytes()
    return out


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> tuple[SweepResult, Path]:
    workspace = tmp_path_factory.mktemp("one") / "ws"
    return sweep(GRID, tiny_golden(), corpus=tiny_corpus(), settings=SETTINGS, workspace=workspace,
                 record_history=False), workspace


def test_workers_2_gives_identical_metrics_and_shares_the_embedding_cache(
        single: tuple[SweepResult, Path], tmp_path: Path) -> None:
    single_result, single_workspace = single
    workspace = tmp_path / "ws"
    executor = RayExecutor(workers=2, workspace=workspace)
    try:
        assert executor.workers == 2
        on_ray = sweep(GRID, tiny_golden(), corpus=tiny_corpus(), settings=SETTINGS, workspace=workspace,
                       executor=executor, record_history=False)
    finally:
        executor.close()
    assert len(on_ray.cells) == 2 * (1 + 2) * 2
    # the same vectors to the bit (each text embedded once, in the same batch), so the same everything
    assert vectors(workspace) == vectors(single_workspace)
    assert scores(on_ray) == scores(single_result)
    assert on_ray.stages["runs"] == single_result.stages["runs"]
    assert on_ray.stages["embeddings"]["texts_embedded"] == single_result.stages["embeddings"]["texts_embedded"]
    # the embed stage embedded exactly what the retrievers read (asyncio's windows included)
    assert on_ray.stages["embeddings"]["embedded_while_searching"] == 0
    assert on_ray.identity["workers"] == 2
    assert (workspace / "ray" / "logs").is_dir() or any((workspace / "ray").glob("session_*"))
    # every passage vector the workers embedded is in the cache this process reads: nothing left to embed
    encoder = load_encoder("minilm-l3", progress=False)
    cache = EmbeddingCache(Workspace.at(workspace), encoder.key, slug=encoder.name)

    def refuse(texts: list[str]) -> None:
        raise AssertionError(f"{len(texts)} texts were not in the shared cache")

    cache.get_or_compute([passage_text(p) for p in tiny_corpus().passages(None)], refuse, prefix=encoder.prefix("passage"))
    # and this process serves the whole sweep from what the workers stored
    again = sweep(GRID, tiny_golden(), corpus=tiny_corpus(), settings=SETTINGS, workspace=workspace, record_history=False)
    assert again.stages["runs"]["computed"] == 0 and again.stages["embeddings"]["texts_embedded"] == 0
    assert scores(again) == scores(single_result)


def test_ray_address_joins_a_running_cluster(single: tuple[SweepResult, Path], tmp_path: Path) -> None:
    single_result = single[0]
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    temp = tempfile.mkdtemp(prefix="gs-ray-", dir="/tmp")  # short: Ray's unix sockets live under it
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
             configure_logging=False, _temp_dir=temp)
    try:
        address = ray.get_runtime_context().gcs_address
        corpus, golden = write_inputs(tmp_path / "data")
        out = tmp_path / "sweep.json"
        command = [sys.executable, "-m", "goldeval", "sweep", "--corpus", str(corpus), "--golden", str(golden),
                   "--chunk", "none,120:30", "--retriever", "bm25,hybrid", "--model", "wordllama,minilm-l3",
                   "--fusion", "norm", "--weight", "0.3", "--rerank", "0,5", "--reranker", "dense:minilm-l3",
                   "--k", "1,3,5", "--headline", "ndcg@5", "--resamples", "500", "--workspace", str(tmp_path / "ws"),
                   "--ray-address", address, "--json", str(out), "--no-history", "--quiet"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=HANG_GUARD)
        assert done.returncode == 0, done.stderr[-2000:]
        assert f"the Ray cluster at {address}" in done.stderr
    finally:
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)
    data = json.loads(out.read_text(encoding="utf-8"))
    assert [c["label"] for c in data["cells"]] == [c.label for c in single_result.cells]
    assert [c["metrics"] for c in data["cells"]] == [{str(m): v for m, v in c.metrics.items()} for c in single_result.cells]
