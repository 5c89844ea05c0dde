"""Retrievers: one protocol (`search(queries, *, top_k) -> Run`), built from specs by name, each
kind with its declared options (`Option`, `OptionSet`) and its resolved `config`."""

from goldeval._lazy import exports
from goldeval.retrievers.base import BuildContext, Retriever, build_retriever, check_run_options, register
from goldeval.retrievers.options import Option, OptionSet

__all__ = ["BuildContext", "Option", "OptionSet", "Retriever", "build_retriever", "check_run_options", "register"]

# Public too, imported on first use (their modules are heavier or optional).
_LAZY = {
    "BM25Retriever": "goldeval.retrievers.bm25",
    "DenseRetriever": "goldeval.retrievers.dense",
    "passage_text": "goldeval.retrievers.dense",
    "HybridRetriever": "goldeval.retrievers.hybrid",
    "RerankRetriever": "goldeval.retrievers.rerank",
    "FunctionScorer": "goldeval.retrievers.rerank",
    "FunctionEncoder": "goldeval.retrievers.encoders.function",
    "load_encoder": "goldeval.retrievers.encoders.registry",
    "sweep_fusion": "goldeval.retrievers.fusion",
    "PgVectorIndex": "goldeval.retrievers.backends.pgvector",
    "LangChainRetriever": "goldeval.retrievers.adapters.langchain",
    "goldeval_embeddings": "goldeval.retrievers.adapters.langchain",
    "LlamaIndexRetriever": "goldeval.retrievers.adapters.llamaindex",
    "goldeval_embedding": "goldeval.retrievers.adapters.llamaindex",
    "HttpRetriever": "goldeval.retrievers.adapters.http",
}
__all__ += list(_LAZY)
__getattr__ = exports(__name__, _LAZY)
