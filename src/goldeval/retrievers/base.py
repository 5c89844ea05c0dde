"""The Retriever protocol and the registry that builds retrievers from CLI specs.

A retriever is anything with a `name` and `search(queries, *, top_k) -> Run`. BM25, dense,
hybrid, reranked, a user's own function and a saved TREC run all fit it. Building one over a
corpus is the job of a factory registered under a spec prefix:

    bm25                      -> retrievers.bm25
    dense:minilm              -> retrievers.dense   (issue: dense/hybrid/rerank)
    hybrid:bm25+dense:minilm  -> retrievers.hybrid
    rerank:...                -> retrievers.rerank
    run:path/to/file.trec     -> retrievers.function (a saved TREC run)
    package.module:function   -> retrievers.function (the user's own search function)
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from goldeval.corpus.model import Passage
from goldeval.errors import InputError
from goldeval.run import Run
from goldeval.types import QuestionId


@runtime_checkable
class Retriever(Protocol):
    """Search many questions at once; return a Run ranked by the one ranking rule."""

    name: str

    def search(self, queries: Mapping[QuestionId, str], *, top_k: int) -> Run: ...


@dataclass
class BuildContext:
    """What a factory gets besides the spec: the passages to index and where it may cache."""

    passages: Sequence[Passage]
    workspace: Path = Path(".goldeval")
    corpus_key: str = ""
    """A content hash of the passages, so caches of two corpora never collide."""
    options: dict[str, object] = field(default_factory=dict)
    built: dict[str, Retriever] = field(default_factory=dict)
    """Retrievers already built in this evaluation, by spec, so hybrid can reuse its parts."""


Factory = Callable[[str, BuildContext], Retriever]
"""Builds a retriever from the part of the spec after its prefix (e.g. `minilm` in `dense:minilm`)."""

# prefix -> "module:function" of its factory, imported only when used (models are heavy).
_FACTORIES: dict[str, str] = {
    "bm25": "goldeval.retrievers.bm25:build",
    "dense": "goldeval.retrievers.dense:build",
    "hybrid": "goldeval.retrievers.hybrid:build",
    "rerank": "goldeval.retrievers.rerank:build",
    "run": "goldeval.retrievers.function:build_from_run_file",
}


def register(prefix: str, target: str) -> None:
    """Register a factory `module:function` for specs starting with `prefix`."""
    _FACTORIES[prefix] = target


def spec_prefix(spec: str) -> str:
    """The registry key of a spec: `bm25` for `bm25?k1=1.2`, `dense` for `dense:minilm`."""
    return re.split(r"[:?]", spec, maxsplit=1)[0]


def needs_corpus(spec: str) -> bool:
    """Whether the spec indexes the corpus (bm25, dense, hybrid, rerank), unlike run: or module:function."""
    return spec_prefix(spec) in ("bm25", "dense", "hybrid", "rerank")


def build_retriever(spec: str, ctx: BuildContext) -> Retriever:
    """Build the retriever a CLI spec names, reusing one already built in `ctx`."""
    if spec in ctx.built:
        return ctx.built[spec]
    prefix = spec_prefix(spec)
    rest = spec[len(prefix) :]
    rest = rest[1:] if rest.startswith(":") else rest  # `bm25?k1=1.2` keeps its `?options`
    if prefix in _FACTORIES:
        factory = _load(_FACTORIES[prefix])
        retriever = factory(rest, ctx)
    elif ":" in spec:
        from goldeval.retrievers.function import build_from_callable_spec

        retriever = build_from_callable_spec(spec, ctx)
    else:
        raise InputError(
            f"unknown retriever {spec!r}",
            value=spec,
            hint="use bm25, dense:MODEL, hybrid:A+B, rerank:..., run:FILE.trec or module:function",
        )
    ctx.built[spec] = retriever
    return retriever


def _load(target: str) -> Factory:
    module, _, func = target.partition(":")
    factory: Factory = getattr(importlib.import_module(module), func)
    return factory
