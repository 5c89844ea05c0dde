"""A LangChain retriever as a goldeval retriever: `goldeval.evaluate(lc_retriever, golden)`, or on the
command line `module:object` / `langchain:module:object?id_key=source`.

Each question is one `retriever.invoke(question, k=depth)` (`k` reaches retrievers that take it, such
as a vector store's, and is dropped for the others). A `VectorStoreRetriever` doing plain similarity
search is asked through its store's `similarity_search_with_score`, the same search with its scores,
so off-topic separability has real scores; other retrievers are ranked by the order they return.
The document id is `metadata[id_key]` (unset: doc_id, source, id, then `Document.id`).
langchain-core is imported only when such an object is used (extra `adapters`).
"""

from __future__ import annotations

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

OPTIONS = OptionSet("langchain", "langchain:package.module:object[?id_key=KEY&timeout=SECONDS]", (ID_KEY, TIMEOUT))

_SCORE_KEYS = ("score", "relevance_score", "similarity")


def is_langchain_retriever(obj: object) -> bool:
    return from_package(obj, "langchain_core") and callable(getattr(obj, "invoke", None))


class LangChainRetriever(AdapterRetriever):
    """`retriever.invoke(question)` per question; ids from the documents' metadata."""

    def __init__(self, retriever: Any, *, name: str | None = None, id_key: str | None = None,
                 timeout: float | None = DEFAULT_TIMEOUT, spec: str | None = None) -> None:
        if not is_langchain_retriever(retriever):
            raise TypeError(f"not a LangChain retriever: {type(retriever).__name__}")
        self.retriever, self.id_key = retriever, id_key
        cls = type(retriever)
        super().__init__(self._search, name=name or getattr(retriever, "name", None) or cls.__name__, kind="langchain",
                         details={"class": f"{cls.__module__}.{cls.__qualname__}", "id_key": id_key,
                                  "scores": "store" if self._store() is not None else "rank"},
                         timeout=timeout, spec=spec)

    def _store(self) -> Any:
        """The vector store to ask for scores, when the retriever is a plain similarity search over one."""
        store = getattr(self.retriever, "vectorstore", None)
        if store is None or getattr(self.retriever, "search_type", None) != "similarity":
            return None
        return store if callable(getattr(store, "similarity_search_with_score", None)) else None

    def _search(self, question: str, k: int) -> list[tuple[str, float]] | list[str]:
        store = self._store()
        if store is not None:
            kwargs = {**dict(getattr(self.retriever, "search_kwargs", None) or {}), "k": k}
            pairs = store.similarity_search_with_score(question, **kwargs)
            return self.as_results((self._id(doc), score) for doc, score in first_results(pairs, k))
        docs = self.retriever.invoke(question, k=k)
        return self.as_results((self._id(doc), _metadata_score(doc)) for doc in first_results(docs, k))

    def _id(self, doc: Any) -> str:
        return self.result_id(getattr(doc, "metadata", None), getattr(doc, "id", None), self.id_key, "Document.id")


def _metadata_score(doc: Any) -> float | None:
    metadata = getattr(doc, "metadata", None) or {}
    return next((float(metadata[key]) for key in _SCORE_KEYS if isinstance(metadata.get(key), (int, float))), None)


def build(rest: str, ctx: BuildContext) -> LangChainRetriever:
    """Factory for `langchain:package.module:object[?id_key=KEY&timeout=S]`."""
    name, obj, values, spec = load_adapted("langchain", rest, OPTIONS, ctx.options, is_langchain_retriever, "a LangChain retriever",
                                           "name a BaseRetriever, e.g. vectorstore.as_retriever()")
    return LangChainRetriever(obj, name=name, id_key=values.text("id_key"), timeout=values.number("timeout"), spec=spec)


def goldeval_embeddings(model: str = "minilm", **options: Any) -> Any:
    """A goldeval embedding model (offline, from an installed package) as LangChain `Embeddings`, so a
    LangChain vector store can use the same model goldeval's `dense:MODEL` does."""
    from goldeval.errors import require

    embeddings = require("langchain_core.embeddings", extra="adapters", purpose="LangChain embeddings",
                         package="langchain-core")
    from goldeval.retrievers.encoders.registry import load_encoder

    encoder = load_encoder(model, **options)

    class GoldevalEmbeddings(embeddings.Embeddings):  # type: ignore[misc, name-defined]
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return encoder.encode(texts, kind="passage").tolist()  # type: ignore[no-any-return]

        def embed_query(self, text: str) -> list[float]:
            return encoder.encode([text], kind="query")[0].tolist()  # type: ignore[no-any-return]

    return GoldevalEmbeddings()
