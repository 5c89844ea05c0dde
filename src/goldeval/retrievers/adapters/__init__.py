"""Retrievers people already have, evaluated as they are (issue 13).

- a LangChain retriever (`retrievers.adapters.langchain`) or a LlamaIndex retriever or index
  (`retrievers.adapters.llamaindex`): passed to `goldeval.evaluate` directly, or named on the command
  line as `module:object` (or `langchain:module:object?id_key=KEY`, `llamaindex:...` for options);
- a search service over HTTP: `http://host/search?q={question}#ids=hits[*].id` (`retrievers.adapters.http`).

Each is called once per question through `FunctionRetriever`, so a question that fails or times out is
an error for that question alone. The libraries are imported only when such an object is used.
"""

from __future__ import annotations

from goldeval.retrievers.adapters.common import DEFAULT_TIMEOUT, AdapterRetriever
from goldeval.retrievers.adapters.langchain import LangChainRetriever, is_langchain_retriever
from goldeval.retrievers.adapters.llamaindex import LlamaIndexRetriever, is_llamaindex_retriever

__all__ = ["AdapterRetriever", "LangChainRetriever", "LlamaIndexRetriever", "adapt"]


def adapt(obj: object, *, name: str | None = None, id_key: str | None = None,
          timeout: float | None = DEFAULT_TIMEOUT, spec: str | None = None) -> AdapterRetriever | None:
    """A goldeval retriever for a LangChain or LlamaIndex retriever object; None for anything else."""
    if isinstance(obj, AdapterRetriever):
        return obj
    if is_langchain_retriever(obj):
        return LangChainRetriever(obj, name=name, id_key=id_key, timeout=timeout, spec=spec)
    if is_llamaindex_retriever(obj):
        return LlamaIndexRetriever(obj, name=name, id_key=id_key, timeout=timeout, spec=spec)
    return None
