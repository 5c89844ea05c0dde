"""Your own encoder function and your own reranker, plus the offline bi-encoder reranker fallback.

    python examples/retrieval_rerank_and_own_encoder.py     # the last part needs goldeval[dense]
"""

from __future__ import annotations

import tempfile

import numpy as np

from goldeval import BuildContext, Passage, Workspace, build_retriever
from goldeval.retrievers import DenseRetriever, FunctionEncoder, FunctionScorer, RerankRetriever

DOCS = {
    "pets/cat": "Cats sleep most of the day and hunt at dusk.",
    "pets/dog": "Dogs need a walk twice a day.",
    "food/bread": "Bread rises when the yeast ferments the dough.",
}
QUESTIONS = {"q1": "when do cats hunt", "q2": "how does bread rise"}


def letter_counts(texts: list[str]) -> np.ndarray:
    """A toy encoder: counts of each letter a-z. Any `encode(texts) -> (n, dim)` array works."""
    return np.array([[t.lower().count(chr(c)) for c in range(97, 123)] for t in texts], dtype=np.float32)


def word_overlap(query: str, texts: list[str]) -> list[float]:
    """A toy reranker: shared words. Any `score(query, texts) -> list[float]` works."""
    words = set(query.lower().split())
    return [float(len(words & set(t.lower().split()))) for t in texts]


def main() -> None:
    passages = [Passage(pid, pid, text) for pid, text in DOCS.items()]
    with tempfile.TemporaryDirectory() as folder:
        workspace = Workspace(folder)
        # key names the function's version in the embedding cache: change it when the function changes.
        dense = DenseRetriever(passages, FunctionEncoder(letter_counts, name="letters", key="letters-v1"), workspace=workspace)
        print("own encoder:", {q: h[0][0] for q, h in dense.search(QUESTIONS, top_k=3).results.items()})
        reranked = RerankRetriever(dense, FunctionScorer(word_overlap, name="overlap"), passages, top=3)
        print("reranked:   ", {q: h[0][0] for q, h in reranked.search(QUESTIONS, top_k=3).results.items()})
        # The offline fallback reranker: re-score BM25's top 50 with a bi-encoder (here minilm).
        fallback = build_retriever("rerank:bm25>dense:minilm?top=50", BuildContext(passages, workspace=folder))
        print("bi-encoder: ", {q: h[0][0] for q, h in fallback.search(QUESTIONS, top_k=3).results.items()})


if __name__ == "__main__":
    main()
