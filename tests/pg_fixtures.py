"""A throwaway PostgreSQL + pgvector server for the tests, real 384-dimension vectors, and a catalog snapshot.

The server is `goldeval.store.pg_local.local_server()`: Debian's PostgreSQL with pgvector built from
Debian's source package for any x86-64 CPU (`make pgvector`, run by `make test`; docs/pgvector.md),
on a fresh data folder, socket only. There is deliberately no skip: a server that does not start is
a failure to see, not to hide.

The vectors are the real default model's (`minilm`, what `dense:minilm` uses, 384 dimensions): the
titles of the 1400 Cranfield documents (short texts, so the session embeds them in seconds; among them
ten groups of identical titles, real ties) and the first 40 Cranfield queries. The products in the
"production" database are embedded by the same model.

Import the fixtures into a test module with `from pg_fixtures import pg_server, ...` (tests/ is on
sys.path under pytest's default rootdir import mode); a module that uses `production_dsn` imports
`minilm_cranfield` too.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from goldeval.corpus.model import Corpus, Document
from goldeval.golden.model import GoldenSet
from goldeval.retrievers.encoders.base import BatchedEncoder
from goldeval.store.workspace import Workspace

CRANFIELD = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cranfield"
DIM = 384
"""The dimension of `minilm`, the default dense model; every vector in the pgvector tests has it."""
N_QUESTIONS = 40

PRODUCTS = [(1, "red electric kettle"), (2, "blue porcelain teapot"), (3, "green ceramic mug"),
            (4, "tea 'chai' blend\twith tab")]
"""The production table's rows (id, name); their embeddings are minilm's of the names."""


@dataclass(frozen=True)
class Embedded:
    """Cranfield titles and questions embedded by minilm, and the workspace that holds the model and cache."""

    corpus: Corpus
    golden: GoldenSet
    ids: list[str]
    vectors: np.ndarray
    question_ids: list[str]
    queries: np.ndarray
    encoder: BatchedEncoder
    workspace: Workspace


@pytest.fixture(scope="session")
def minilm_cranfield(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Embedded]:
    """The session's real vectors, embedded once through the dense retriever (so its cache holds them)."""
    from goldeval.corpus.cranfield import load_cranfield_corpus
    from goldeval.golden.cranfield import load_cranfield_golden
    from goldeval.retrievers.dense import DenseRetriever
    from goldeval.retrievers.encoders.registry import load_encoder

    full = load_cranfield_corpus(CRANFIELD)
    corpus = Corpus({d.id: Document(d.id, d.title) for d in full}, name="cranfield-titles")
    golden_all = load_cranfield_golden(CRANFIELD)
    questions = golden_all.questions[:N_QUESTIONS]
    golden = GoldenSet(questions, golden_all.qrels.subset(q.id for q in questions), path=golden_all.path)
    workspace = Workspace.at(tmp_path_factory.mktemp("pg-models") / ".goldeval")
    encoder = load_encoder("minilm", progress=False)
    retriever = DenseRetriever(corpus.passages(), encoder, workspace=workspace)
    queries = encoder.encode([q.question for q in questions], kind="query")
    assert retriever.vectors.shape == (1400, DIM) and queries.shape == (N_QUESTIONS, DIM)
    yield Embedded(corpus, golden, list(retriever.passage_ids), retriever.vectors, [q.id for q in questions],
                   queries, encoder, workspace)
    retriever.close()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A PostgreSQL server on a fresh data folder for the session; yield its admin DSN."""
    from goldeval.store.pg_local import local_server

    with local_server() as dsn:
        yield dsn


def _create_database(admin_uri: str, name: str) -> str:
    import psycopg
    from psycopg import sql

    with psycopg.connect(admin_uri, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return admin_uri.replace("/postgres?", f"/{name}?")


def as_literal(row: np.ndarray) -> str:
    """A vector in pgvector's text form, exact for float32 (repr round-trips)."""
    return "[" + ",".join(repr(float(x)) for x in row) + "]"


@pytest.fixture(scope="session")
def production_dsn(pg_server: str, minilm_cranfield: Embedded) -> str:
    """A database as a user runs it: pgvector enabled in public, a products table with minilm vectors
    and an HNSW index, and an application schema of its own with a table called `passages`."""
    import psycopg

    names = minilm_cranfield.encoder.encode([name for _, name in PRODUCTS], kind="passage")
    dsn = _create_database(pg_server, "shop")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
        conn.execute(f"CREATE TABLE public.products (id integer PRIMARY KEY, name text, embedding vector({DIM}))")
        conn.execute("CREATE INDEX products_hnsw ON public.products USING hnsw (embedding vector_ip_ops)")
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO public.products VALUES (%s, %s, %s::vector)",
                            [(pid, name, as_literal(vec)) for (pid, name), vec in zip(PRODUCTS, names, strict=True)])
        conn.execute("CREATE SCHEMA app")
        conn.execute(f"CREATE TABLE app.passages (pos integer, id text, embedding vector({DIM}))")
        conn.execute("INSERT INTO app.passages VALUES (0, 'keep-me', %s::vector)",
                     (as_literal(minilm_cranfield.vectors[0]),))
    return dsn


@pytest.fixture(scope="session")
def bare_dsn(pg_server: str) -> str:
    """A database where pgvector is available on the server but not enabled."""
    return _create_database(pg_server, "bare")


_SYSTEM = "('pg_catalog', 'information_schema', 'pg_toast')"


def snapshot(dsn: str) -> dict[str, Any]:
    """Everything a user could see change: schemas, relations, columns, extensions, comments,
    and every user table's rows with their physical identity (ctid, xmin: an UPDATE that writes
    the same values still changes them)."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as conn:
        schemas = conn.execute("SELECT nspname FROM pg_namespace ORDER BY 1").fetchall()
        relations = conn.execute(
            "SELECT n.nspname, c.relname, c.relkind, c.relfilenode FROM pg_class c "
            f"JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT IN {_SYSTEM} ORDER BY 1, 2"
        ).fetchall()
        columns = conn.execute(
            "SELECT table_schema, table_name, column_name, data_type, udt_name FROM information_schema.columns "
            f"WHERE table_schema NOT IN {_SYSTEM} ORDER BY 1, 2, 3"
        ).fetchall()
        extensions = conn.execute(
            "SELECT e.extname, n.nspname, e.extversion FROM pg_extension e "
            "JOIN pg_namespace n ON n.oid = e.extnamespace ORDER BY 1"
        ).fetchall()
        comments = conn.execute("SELECT objoid::text, classoid::text, description FROM pg_description "
                                "WHERE objoid >= 16384 ORDER BY 1, 2").fetchall()
        tables = [(s, r) for s, r, kind, _ in relations if kind == "r"]
        data = {}
        for schema, table in tables:
            query = sql.SQL(
                "SELECT count(*), md5(coalesce(string_agg(t.ctid::text || ':' || t.xmin::text || ':' || t::text, "
                "',' ORDER BY t.ctid), '')) FROM {} t"
            ).format(sql.Identifier(schema, table))
            data[f"{schema}.{table}"] = conn.execute(query).fetchone()
    return {
        "schemas": schemas,
        "relations": relations,
        "columns": columns,
        "extensions": extensions,
        "comments": comments,
        "data": data,
    }


def eval_schemas(dsn: str) -> list[str]:
    """Schemas that look like goldeval's, left in the database."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'goldeval\\_eval\\_%' ORDER BY 1")
        return [r[0] for r in rows.fetchall()]
