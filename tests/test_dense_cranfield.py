"""On the real Cranfield collection: goldeval's BM25 against an independent BM25 (rank_bm25)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "cranfield"


def _bench_cranfield():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_cranfield_module", ROOT / "bench" / "cranfield.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.bench  # rank_bm25 is the outside reference
def test_goldeval_bm25_agrees_with_rank_bm25_within_0_01() -> None:
    check = _bench_cranfield().check_bm25(DATA)
    assert set(check["abs_diff"]) == {"ndcg@10", "map", "recall@100"}
    for metric, diff in check["abs_diff"].items():
        assert diff <= 0.01, (metric, check["goldeval"][metric], check["rank_bm25"][metric])
    # Both are real rankings, not empty runs that would agree trivially.
    assert check["rank_bm25"]["ndcg@10"] > 0.3 and check["goldeval"]["recall@100"] > 0.6
