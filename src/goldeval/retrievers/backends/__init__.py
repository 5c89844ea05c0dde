"""The vector indexes dense search runs on, chosen by name, each with its declared options.

- `exact` (default): numpy inner product, the reference (`index.ExactIndex`);
- `ann`: usearch's HNSW graph, extra `ann` (`index.AnnIndex`);
- `pgvector`: PostgreSQL + pgvector in goldeval's own eval schema, extra `pg` (`pgvector.PgVectorIndex`).

They are part of retrieval, not of storage: `goldeval.store` keeps persistence only (atomic writes,
the workspace, the embedding cache, the PostgreSQL isolation guard), and never imports retrievers.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from goldeval.errors import InputError
from goldeval.limits import NUMBERS
from goldeval.retrievers.backends.index import (
    AnnIndex,
    ExactIndex,
    VectorIndex,
    ann_recall,
    recall_against_exact,
)
from goldeval.retrievers.options import Option, OptionSet
from goldeval.store.pg_guard import EVAL_PREFIX

__all__ = [
    "BACKENDS", "AnnIndex", "ExactIndex", "VectorIndex", "ann_recall", "backend_options", "index_identity",
    "make_index", "recall_against_exact",
]

BACKENDS = ("exact", "ann", "pgvector")

ANN_OPTIONS = OptionSet("ann", "dense:MODEL?backend=ann", (
    Option("connectivity", "int", "HNSW graph degree (usearch)", 16, low=2, high=1024),
    Option("expansion_add", "int", "HNSW candidates while building the graph", 128, low=1,
           high=NUMBERS["candidates"].high),
    Option("expansion_search", "int", "HNSW candidates while searching (higher: better recall, slower)", 64, low=1,
           high=NUMBERS["candidates"].high),
))

PGVECTOR_OPTIONS = OptionSet("pgvector", "dense:MODEL?backend=pgvector", (
    Option("dsn", "str", "PostgreSQL connection string (unset: $GOLDEVAL_PG_DSN; the CLI's --dsn sets it)"),
    Option("schema", "str", "an eval schema to create, named goldeval_eval_... (unset: a fresh unique one)"),
    Option("prefix", "str", "prefix of the generated schema name, e.g. goldeval_eval_ci_", EVAL_PREFIX),
    Option("metric", "choice", "ip: inner product (`<#>`); cosine: 1 - cosine distance (`<=>`)", "ip",
           choices=("ip", "cosine")),
    Option("hnsw", "bool", "search through an HNSW index (approximate) instead of exactly", False),
    Option("hnsw_m", "int", "HNSW links per node (with hnsw=true)", 16, low=2, high=100),
    Option("hnsw_ef_construction", "int", "HNSW candidates while building (with hnsw=true)", 64, low=4, high=1000),
    Option("ef_search", "int", "HNSW candidates while searching, raised to top_k (with hnsw=true)", 100,
           low=1, high=1000),
    Option("create_extension", "bool", "create pgvector in goldeval's schema if the database lacks it", True),
))

_SETS = {"exact": OptionSet("exact", "dense:MODEL?backend=exact"), "ann": ANN_OPTIONS, "pgvector": PGVECTOR_OPTIONS}


def backend_options(backend: str) -> OptionSet:
    """The options a backend declares (none for exact)."""
    if backend not in _SETS:
        raise InputError(f"unknown vector backend {backend!r}", value=backend, hint=f"use one of {', '.join(BACKENDS)}")
    return _SETS[backend]


def make_index(backend: str, dim: int, options: Mapping[str, object] | None = None) -> VectorIndex:
    """The index a dense retriever uses, built from its options (strings or typed values; other
    keys are ignored): `exact` (default), `ann` (usearch) or `pgvector`."""
    values = backend_options(backend).resolve({}, options or {}, spec=f"backend={backend}")
    if backend == "exact":
        return ExactIndex(dim)
    if backend == "ann":
        return AnnIndex(dim, connectivity=values.whole("connectivity") or 16,
                        expansion_add=values.whole("expansion_add") or 128,
                        expansion_search=values.whole("expansion_search") or 64)
    dsn = values.text("dsn") or os.environ.get("GOLDEVAL_PG_DSN")
    if not dsn:
        raise InputError(
            "the pgvector backend needs a PostgreSQL connection string",
            hint="pass --dsn postgresql://USER@HOST/DB, the option dsn=..., or set GOLDEVAL_PG_DSN",
        )
    from goldeval.retrievers.backends.pgvector import PgVectorIndex  # extra `pg`

    return PgVectorIndex(
        dsn,
        schema=values.text("schema"),
        prefix=values.text("prefix") or EVAL_PREFIX,
        metric="cosine" if values["metric"] == "cosine" else "ip",
        hnsw=values.flag("hnsw"),
        hnsw_m=values.whole("hnsw_m") or 16,
        hnsw_ef_construction=values.whole("hnsw_ef_construction") or 64,
        ef_search=values.whole("ef_search") or 100,
        create_extension=values.flag("create_extension"),
    )


def index_identity(index: VectorIndex) -> dict[str, object]:
    """What the results record about an index beyond its options: for pgvector the schema it
    created and the DSN without its password (never the password)."""
    identity: dict[str, object] = {"index": type(index).__name__}
    for attribute in ("schema", "shown_dsn"):
        if hasattr(index, attribute):
            identity["dsn" if attribute == "shown_dsn" else attribute] = getattr(index, attribute)
    return identity
