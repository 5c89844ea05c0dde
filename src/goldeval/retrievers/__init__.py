"""Retrievers: one protocol (`search(queries, *, top_k) -> Run`), built from specs by name, each
kind with its declared options (`Option`, `OptionSet`) and its resolved `config`."""

from goldeval.retrievers.base import BuildContext, Retriever, build_retriever, check_run_options, register
from goldeval.retrievers.options import Option, OptionSet

__all__ = ["BuildContext", "Option", "OptionSet", "Retriever", "build_retriever", "check_run_options", "register"]
