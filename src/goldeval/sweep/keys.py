"""The cache keys of stored runs: what a run's results depend on, and nothing else.

A base run (bm25, dense:MODEL) depends on the passages (their fingerprint, so chunking is in it),
the retriever's resolved options (`declared_options`: defaults, `--option`s and the spec's own values),
the identity of what computes it (the embedding model's key, which covers its weights and package
versions; bm25s' version; the source of goldeval's retriever module, so editing it invalidates its
runs), the question texts and the depth. A reranked run depends on its base run's content instead of
the passages' (the base may itself be a fusion of stored runs), plus the reranker's identity.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Mapping
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from goldeval.retrievers.base import declared_options, spec_prefix
from goldeval.retrievers.options import split_spec
from goldeval.store.workspace import Workspace
from goldeval.sweep.cache import FORMAT, StoredRun, content_key


def run_key(spec: str, *, passages: str, questions: str, depth: int, options: Mapping[str, object],
            workspace: Workspace, base: str | None = None) -> str:
    """The stored-run key of `spec` searched to `depth`; `base` is the content key of a rerank's base run."""
    declared = declared_options(spec, options)
    values = [[d.spec, dict(d.values)] for d in declared]
    identity = [_identity(d.spec, workspace) for d in declared]
    return content_key("run", FORMAT, spec, values, identity, passages, questions, depth, base)


def run_content(run: StoredRun) -> str:
    """A key for a run's results themselves (a fused base run has no simpler identity)."""
    return content_key("results", run.depth, sorted(run.results.items()), sorted(run.errors.items()))


def _identity(spec: str, workspace: Workspace) -> dict[str, Any]:
    prefix = spec_prefix(spec)
    out: dict[str, Any] = {"code": _module_digest(f"goldeval.retrievers.{prefix}")}
    if prefix == "bm25":
        out["bm25s"] = _version("bm25s")
    elif prefix == "dense":
        out["model"] = model_key(split_spec(spec[len("dense:"):])[0], workspace)
    elif prefix == "rerank":
        from goldeval.retrievers.rerank import parse

        reranker = parse(spec[len("rerank:"):])[1]
        out["reranker"] = (model_key(reranker[len("dense:"):], workspace) if reranker.startswith("dense:")
                           else str(Path(reranker.removeprefix("ce:")).expanduser().resolve())
                           if reranker.startswith("ce:") or Path(reranker).expanduser().is_dir() else reranker)
    return out


def model_key(model: str, workspace: Workspace) -> str:
    """The embedding cache's key of a model (no weights are loaded to learn it)."""
    from goldeval.retrievers.encoders.registry import shared_encoder

    return str(shared_encoder(model, workspace=workspace).key)


@cache
def _module_digest(module: str) -> str | None:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return None
    return hashlib.sha256(Path(spec.origin).read_bytes()).hexdigest()[:16]


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None
