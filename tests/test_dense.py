"""Dense retrieval: real small models over a tiny corpus, the cache, backends, spec errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from goldeval.corpus.model import Passage
from goldeval.errors import InputError
from goldeval.retrievers.backends.index import AnnIndex, ExactIndex, ann_recall
from goldeval.retrievers.base import BuildContext, build_retriever
from goldeval.retrievers.dense import DenseRetriever
from goldeval.retrievers.encoders import FunctionEncoder
from goldeval.store.workspace import Workspace

TEXTS = {
    "aero/plate": "The boundary layer on a flat plate in supersonic flow thickens downstream.",
    "aero/heat": "Heat transfer to a blunt body at hypersonic speeds is dominated by the stagnation point.",
    "food/bread": "Bake the bread at two hundred degrees for forty minutes.",
    "food/soup": "Simmer the onion soup slowly and season it with thyme.",
    "music/piano": "Practise piano scales slowly with a metronome.",
}
PASSAGES = [Passage(pid, pid, text) for pid, text in TEXTS.items()]
QUERIES = {"q1": "supersonic flat plate boundary layer", "q2": "how long to bake bread", "q3": "piano practice"}


@pytest.mark.models
@pytest.mark.parametrize("model", ["minilm", "wordllama"])
def test_dense_finds_the_right_passage(model: str, tmp_path: Path) -> None:
    retriever = build_retriever(f"dense:{model}", BuildContext(PASSAGES, workspace=tmp_path))
    run = retriever.search(QUERIES, top_k=3)
    assert run.name == f"dense:{model}"
    assert [run.results[q][0][0] for q in QUERIES] == ["aero/plate", "food/bread", "music/piano"]
    assert all(len(hits) == 3 for hits in run.results.values())
    scores = [s for _, s in run.results["q1"]]
    assert scores == sorted(scores, reverse=True)


def _counting_encoder() -> tuple[FunctionEncoder, list[int]]:
    calls: list[int] = []

    def encode(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        return np.stack([np.frombuffer(t.ljust(16)[:16].encode("latin-1", "replace"), dtype=np.uint8) for t in texts])

    return FunctionEncoder(encode, name="bytes", key="bytes-v1"), calls


def test_rerun_embeds_nothing(tmp_path: Path) -> None:
    encoder, calls = _counting_encoder()
    ws = Workspace(tmp_path)
    first = DenseRetriever(PASSAGES, encoder, workspace=ws).search(QUERIES, top_k=2)
    embedded = sum(calls)
    assert embedded >= len(PASSAGES) + len(QUERIES)
    again = DenseRetriever(PASSAGES, encoder, workspace=ws)
    second = again.search(QUERIES, top_k=2)
    assert sum(calls) == embedded
    assert again.passage_stats.hits == len(PASSAGES) and again.passage_stats.computed == 0
    assert second.results == first.results


def test_changing_one_passage_embeds_only_that_one(tmp_path: Path) -> None:
    encoder, calls = _counting_encoder()
    ws = Workspace(tmp_path)
    DenseRetriever(PASSAGES, encoder, workspace=ws)
    before = sum(calls)
    changed = [*PASSAGES[:-1], Passage("music/piano", "music/piano", "Practise piano arpeggios.")]
    retriever = DenseRetriever(changed, encoder, workspace=ws)
    assert retriever.passage_stats.computed == 1
    assert sum(calls) - before == 1


@pytest.mark.ann
def test_ann_backend_matches_exact_on_a_small_corpus(tmp_path: Path) -> None:
    encoder, _ = _counting_encoder()
    exact = DenseRetriever(PASSAGES, encoder, workspace=Workspace(tmp_path)).search(QUERIES, top_k=3)
    ann_retriever = DenseRetriever(PASSAGES, encoder, workspace=Workspace(tmp_path), backend="ann")
    assert ann_retriever.ann_recall == 1.0  # five passages: the graph is exact
    ann = ann_retriever.search(QUERIES, top_k=3)
    for qid in QUERIES:
        assert [d for d, _ in ann.results[qid]] == [d for d, _ in exact.results[qid]]
        assert [s for _, s in ann.results[qid]] == pytest.approx([s for _, s in exact.results[qid]], abs=1e-5)


def test_exact_index_against_brute_force() -> None:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(2500, 16)).astype(np.float32)
    queries = rng.normal(size=(7, 16)).astype(np.float32)
    index = ExactIndex(16, block=3)
    index.add([f"p{i}" for i in range(1000)], vectors[:1000])
    index.add([f"p{i}" for i in range(1000, 2500)], vectors[1000:])
    ids, scores = index.search(queries, 10)
    truth = np.argsort(-(queries @ vectors.T), axis=1)[:, :10]
    assert ids == [[f"p{i}" for i in row] for row in truth]
    np.testing.assert_allclose(scores, np.take_along_axis(queries @ vectors.T, truth, axis=1), rtol=1e-5)
    assert index.search(queries, 5000)[1].shape == (7, 2500)


@pytest.mark.ann
def test_ann_recall_is_reported_and_high_on_clustered_data() -> None:
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(50, 32))
    vectors = (centres[rng.integers(0, 50, 4000)] + 0.3 * rng.normal(size=(4000, 32))).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    recall = ann_recall(vectors, vectors[:100], top_k=10)
    assert 0.9 <= recall <= 1.0
    index = AnnIndex(32)
    index.add([str(i) for i in range(10)], vectors[:10])
    ids, _ = index.search(vectors[:1], 3)
    assert ids[0][0] == "0"


def test_empty_corpus_returns_empty_results(tmp_path: Path) -> None:
    encoder, _ = _counting_encoder()
    run = DenseRetriever([], encoder, workspace=Workspace(tmp_path)).search(QUERIES, top_k=3)
    assert run.results == {q: [] for q in QUERIES}


def test_spec_errors(tmp_path: Path) -> None:
    ctx = BuildContext(PASSAGES, workspace=tmp_path)
    with pytest.raises(InputError, match="unknown option\\(s\\) backnd"):
        build_retriever("dense:minilm?backnd=ann", ctx)
    with pytest.raises(InputError, match="names no model"):
        build_retriever("dense:", ctx)
    with pytest.raises(InputError, match="batch_size='many'.*is not a whole number"):
        build_retriever("dense:minilm?batch_size=many", ctx)
    with pytest.raises(InputError, match="option backend='faiss' in 'dense:minilm\\?backend=faiss' is not one of exact, ann, pgvector"):
        build_retriever("dense:minilm?backend=faiss", ctx)
