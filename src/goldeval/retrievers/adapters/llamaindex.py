"""A LlamaIndex retriever (or index) as a goldeval retriever: `goldeval.evaluate(index.as_retriever(),
golden)`, or on the command line `module:object` / `llamaindex:module:object?id_key=source`.

Each question is one `retriever.retrieve(question)` on a copy of the retriever whose
`similarity_top_k` is the evaluation's depth (the user's object is never changed); an index is
asked through `index.as_retriever()`. Scores are the nodes' own. The document id is
`node.metadata[id_key]` (unset: doc_id, source, id, then the node's source document id, then its
own id). llama-index-core is imported only when such an object is used (extra `adapters`).
"""

from __future__ import annotations

import copy
from typing import Any

from goldeval.retrievers.adapters.common import (
    DEFAULT_TIMEOUT,
    ID_KEY,
    TIMEOUT,
    AdapterRetriever,
    from_package,
    load_adapted,
)
from goldeval.retrievers.base import BuildContext
from goldeval.retrievers.function import first_results
from goldeval.retrievers.options import OptionSet

OPTIONS = OptionSet("llamaindex", "llamaindex:package.module:object[?id_key=KEY&timeout=SECONDS]", (ID_KEY, TIMEOUT))


def is_llamaindex_retriever(obj: object) -> bool:
    """A retriever (`retrieve`) or an index (`as_retriever`) of llama-index."""
    return from_package(obj, "llama_index") and (callable(getattr(obj, "retrieve", None))
                                                 or callable(getattr(obj, "as_retriever", None)))


class LlamaIndexRetriever(AdapterRetriever):
    """`retriever.retrieve(question)` per question; ids from the nodes' metadata, scores from the nodes."""

    def __init__(self, retriever: Any, *, name: str | None = None, id_key: str | None = None,
                 timeout: float | None = DEFAULT_TIMEOUT, spec: str | None = None) -> None:
        if not is_llamaindex_retriever(retriever):
            raise TypeError(f"not a LlamaIndex retriever: {type(retriever).__name__}")
        if not callable(getattr(retriever, "retrieve", None)):
            retriever = retriever.as_retriever()
        self.retriever, self.id_key = retriever, id_key
        cls = type(retriever)
        super().__init__(self._search, name=name or cls.__name__, kind="llamaindex",
                         details={"class": f"{cls.__module__}.{cls.__qualname__}", "id_key": id_key},
                         timeout=timeout, spec=spec)

    def _deep(self, k: int) -> Any:
        """The retriever asked for k results: a shallow copy with `similarity_top_k = k` where it has one."""
        if not hasattr(self.retriever, "similarity_top_k"):
            return self.retriever
        deep = copy.copy(self.retriever)
        try:
            deep.similarity_top_k = k
        except (AttributeError, TypeError, ValueError):
            return self.retriever
        return deep

    def _search(self, question: str, k: int) -> list[tuple[str, float]] | list[str]:
        nodes = self._deep(k).retrieve(question)
        return self.as_results((self._id(n), None if n.score is None else float(n.score)) for n in first_results(nodes, k))

    def _id(self, scored: Any) -> str:
        node = getattr(scored, "node", scored)
        ref = getattr(node, "ref_doc_id", None)
        own = ref or getattr(node, "node_id", None)
        return self.result_id(getattr(node, "metadata", None), own, self.id_key, "ref_doc_id" if ref else "node_id")


def build(rest: str, ctx: BuildContext) -> LlamaIndexRetriever:
    """Factory for `llamaindex:package.module:object[?id_key=KEY&timeout=S]`."""
    name, obj, values, spec = load_adapted("llamaindex", rest, OPTIONS, ctx.options, is_llamaindex_retriever, "a LlamaIndex retriever or index",
                                           "name a BaseRetriever or an index, e.g. VectorStoreIndex(...).as_retriever()")
    return LlamaIndexRetriever(obj, name=name, id_key=values.text("id_key"), timeout=values.number("timeout"), spec=spec)


def goldeval_embedding(model: str = "minilm", **options: Any) -> Any:
    """A goldeval embedding model (offline, from an installed package) as a LlamaIndex `BaseEmbedding`."""
    from goldeval.errors import require

    base = require("llama_index.core.embeddings", extra="adapters", purpose="LlamaIndex embeddings",
                   package="llama-index-core")
    from goldeval.retrievers.encoders.registry import load_encoder

    encoder = load_encoder(model, **options)

    class GoldevalEmbedding(base.BaseEmbedding):  # type: ignore[misc, name-defined]
        def _get_query_embedding(self, query: str) -> list[float]:
            return encoder.encode([query], kind="query")[0].tolist()  # type: ignore[no-any-return]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return encoder.encode([text], kind="passage")[0].tolist()  # type: ignore[no-any-return]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return encoder.encode(texts, kind="passage").tolist()  # type: ignore[no-any-return]

    return GoldevalEmbedding(model_name=f"goldeval:{model}")
