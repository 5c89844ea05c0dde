"""Retrievers: one protocol (`search(queries, *, top_k) -> Run`), built from specs by name."""

from goldeval.retrievers.base import BuildContext, Retriever, build_retriever, register

__all__ = ["BuildContext", "Retriever", "build_retriever", "register"]
