"""Reranking: user functions, the bi-encoder fallback, and a tiny CrossEncoder built here."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldeval.corpus.model import Passage
from goldeval.errors import InputError
from goldeval.retrievers.base import BuildContext, build_retriever
from goldeval.retrievers.rerank import FunctionScorer, RerankRetriever

TEXTS = {
    "aero/plate": "The boundary layer on a flat plate in supersonic flow thickens downstream.",
    "aero/heat": "Heat transfer to a blunt body at hypersonic speeds.",
    "food/bread": "Bake the bread at two hundred degrees for forty minutes.",
    "food/soup": "Simmer the onion soup slowly and season it with thyme.",
    "music/piano": "Practise piano scales slowly with a metronome.",
}
PASSAGES = [Passage(pid, pid, text) for pid, text in TEXTS.items()]


def by_length(query: str, texts: list[str]) -> list[float]:
    """A user reranker: shorter texts first (module-level so a spec can name it)."""
    return [-float(len(t)) for t in texts]


def test_function_reranker_reorders_the_top_n_and_keeps_the_tail(tmp_path: Path) -> None:
    ctx = BuildContext(PASSAGES, workspace=tmp_path)
    base = build_retriever("bm25", ctx)
    query = {"q": "slowly flat plate bread piano"}
    base_ids = [d for d, _ in base.search(query, top_k=5).results["q"]]
    assert len(base_ids) == 4
    reranked = RerankRetriever(base, FunctionScorer(by_length), PASSAGES, top=2).search(query, top_k=5)
    ids = [d for d, _ in reranked.results["q"]]
    assert ids[:2] == sorted(base_ids[:2], key=lambda d: len(TEXTS[d]))
    assert ids[2:] == base_ids[2:]
    scores = [s for _, s in reranked.results["q"]]
    assert scores == sorted(scores, reverse=True)


def test_function_reranker_from_spec(tmp_path: Path) -> None:
    ctx = BuildContext(PASSAGES, workspace=tmp_path)
    retriever = build_retriever(f"rerank:bm25>{__name__}:by_length?top=2", ctx)
    assert retriever.name == f"rerank:bm25>{__name__}:by_length?top=2"
    assert "bm25" in ctx.built
    run = retriever.search({"q": "slowly"}, top_k=10)
    assert [d for d, _ in run.results["q"]] == ["music/piano", "food/soup"]


def test_wrong_number_of_scores_is_an_error(tmp_path: Path) -> None:
    ctx = BuildContext(PASSAGES, workspace=tmp_path)
    bad = RerankRetriever(build_retriever("bm25", ctx), FunctionScorer(lambda q, t: [1.0], name="bad"), PASSAGES)
    with pytest.raises(InputError, match="reranker 'bad' returned 1 scores for 2 texts"):
        bad.search({"q": "slowly"}, top_k=5)


@pytest.mark.models
def test_bi_encoder_fallback_reranks_with_a_dense_model(tmp_path: Path) -> None:
    ctx = BuildContext(PASSAGES, workspace=tmp_path)
    query = {"q": "slowly: supersonic boundary layer, bread"}
    rerank = build_retriever("rerank:bm25>dense:minilm?top=5", ctx)
    dense = build_retriever("dense:minilm", ctx).search(query, top_k=5)
    run = rerank.search(query, top_k=5)
    base = ctx.built["bm25"].search(query, top_k=5)
    # Reranking the base's candidates must order them as the dense model does.
    candidates = {d for d, _ in base.results["q"]}
    assert len(candidates) == 4
    dense_order = [d for d, _ in dense.results["q"] if d in candidates]
    assert [d for d, _ in run.results["q"]][: len(dense_order)] == dense_order
    assert run.results["q"][0][0] == "aero/plate"


def _tiny_cross_encoder(folder: Path) -> Path:
    """A random 1-layer BERT cross-encoder with a 30-word vocabulary, saved to `folder`."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder.mkdir()
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    words += sorted({w.strip(".,").lower() for t in TEXTS.values() for w in t.split()})
    (folder / "vocab.txt").write_text("\n".join(words) + "\n")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(words), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64, num_labels=1, initializer_range=1.0)
    BertForSequenceClassification(config).save_pretrained(folder)
    BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True).save_pretrained(folder)
    return folder


@pytest.mark.models
def test_cross_encoder_folder_reranks_like_the_model_scores(tmp_path: Path) -> None:
    from sentence_transformers import CrossEncoder

    folder = _tiny_cross_encoder(tmp_path / "tiny-ce")
    ctx = BuildContext(PASSAGES, workspace=tmp_path)
    query = "slowly bake bread, flat plate piano"
    run = build_retriever(f"rerank:bm25>ce:{folder}?top=4", ctx).search({"q": query}, top_k=4)
    candidates = [d for d, _ in ctx.built["bm25"].search({"q": query}, top_k=4).results["q"]]
    assert len(candidates) == 4
    direct = CrossEncoder(str(folder), device="cpu").predict([(query, TEXTS[d]) for d in candidates])
    expected = [d for _, d in sorted(zip(direct.tolist(), candidates, strict=True), reverse=True)]
    assert [d for d, _ in run.results["q"]] == expected
    assert [s for _, s in run.results["q"]] == pytest.approx(sorted(direct.tolist(), reverse=True), abs=1e-5)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("rerank:bm25", "needs a base and a reranker joined by '>'"),
        ("rerank:>dense:minilm", "needs a base and a reranker"),
        ("rerank:bm25>nonsense", "unknown reranker 'nonsense'"),
        ("rerank:bm25>nosuchmodule_xyz:score", "cannot import reranker function 'nosuchmodule_xyz:score'"),
        ("rerank:bm25>ce:/no/such/folder", "cross-encoder folder not found"),
        ("rerank:bm25>dense:minilm?topp=5", "unknown option\\(s\\) topp"),
    ],
)
def test_spec_errors(spec: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=message):
        build_retriever(spec, BuildContext(PASSAGES, workspace=tmp_path))
