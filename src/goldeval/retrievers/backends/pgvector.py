"""PostgreSQL + pgvector as the vector index of dense search, isolated in goldeval's own schema.

A retrieval backend, not persistence: it lives beside the other indexes (`backends.index`), and
only the isolation guard it relies on (`goldeval.store.pg_guard`) is in the storage layer.

Users keep their production vectors in PostgreSQL; an evaluation should measure search there
without ever touching them (issue 3, part 4). `PgVectorIndex` connects by DSN (psycopg 3),
creates a fresh `goldeval_eval_<time>_<random>` schema (see `pg_guard`), loads the passage
vectors with a binary COPY, answers queries with pgvector's exact search (`ORDER BY embedding <#> q`,
a sequential scan) or, on request, through an HNSW index, and on `close()` drops exactly what it
created. It is a context manager; a forgotten index is cleaned up at garbage collection or exit.

Scores: with the default `metric="ip"` the score is the inner product `-(embedding <#> q)`, which
is the cosine for the L2-normalised vectors goldeval's encoders produce; `metric="cosine"` scores
`1 - (embedding <=> q)`. pgvector computes both in float32, as numpy does.
"""

from __future__ import annotations

import os
import struct
import warnings
import weakref
from collections.abc import Sequence
from types import TracebackType
from typing import Any, Literal

import numpy as np

from goldeval.errors import GoldevalError, InputError
from goldeval.ranking import ranked
from goldeval.store.pg_guard import (
    EVAL_PREFIX,
    TABLE,
    CleanupError,
    Ledger,
    check_eval_namespace,
    connect,
    drop_created,
    leftover_message,
    leftover_schemas,
    list_eval_schemas,
    lock_schema,
    new_eval_schema,
    redact_dsn,
)
from goldeval.textsafe import warn

__all__ = ["CleanupError", "Metric", "PgVectorIndex", "list_eval_schemas"]

Metric = Literal["ip", "cosine"]
"""`ip`: inner product (`<#>`, the default, equal to cosine on normalised vectors); `cosine`: `<=>`."""

_METRICS: dict[str, tuple[str, str, str]] = {
    # metric -> (operator, HNSW operator class, score as SQL of the distance `d`)
    "ip": ("<#>", "vector_ip_ops", "-({d})"),
    "cosine": ("<=>", "vector_cosine_ops", "1 - ({d})"),
}
_TABLE = TABLE
_HNSW_MAX_DIM = 2000  # pgvector's limit for an HNSW index on `vector`
_EF_SEARCH_MAX = 1000  # pgvector's limit for hnsw.ef_search
_PIPELINE_BATCH = 256
_INSTALL_HINT = (
    "install pgvector on the server (Debian 13: apt install postgresql-17-pgvector; other Debian/Ubuntu "
    "with the PGDG repository: apt install postgresql-<major>-pgvector; or build it from source with "
    "`make OPTFLAGS=\"\"` so it runs on any CPU; or use the pgvector/pgvector Docker image), then let a "
    "superuser run CREATE EXTENSION vector (docs/pgvector.md)"
)


class PgVectorIndex:
    """A VectorIndex (`add`, `search`, `close`) stored in a fresh eval schema of a PostgreSQL database.

    `schema`: an eval schema name to create (it must start with `goldeval_eval_` and not exist yet);
    by default a unique one is generated from `prefix`. `hnsw=True` builds an HNSW index before the
    first search (approximate; `ef_search` candidates, at least top_k); the default is exact search.
    `create_extension`: create pgvector inside goldeval's schema when the database lacks it (and drop
    it again on close); with False a database without pgvector is an error.
    Through the dense retriever these come from its options (`retrievers.backends.PGVECTOR_OPTIONS`).
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str | None = None,
        prefix: str = EVAL_PREFIX,
        metric: Metric = "ip",
        hnsw: bool = False,
        hnsw_m: int = 16,
        hnsw_ef_construction: int = 64,
        ef_search: int = 100,
        create_extension: bool = True,
    ) -> None:
        if metric not in _METRICS:
            raise InputError(f"unknown pgvector metric {metric!r}", value=metric, hint="use 'ip' or 'cosine'")
        self.schema = check_eval_namespace(schema) if schema is not None else new_eval_schema(prefix)
        self.metric: Metric = metric
        self.hnsw = hnsw
        self.hnsw_m = hnsw_m
        self.hnsw_ef_construction = hnsw_ef_construction
        self.ef_search = ef_search
        self.dim: int | None = None
        self.count = 0
        self._hnsw_built = False
        self._ledger = Ledger()
        self._conn = connect(dsn)  # first: it raises the install hint when psycopg is missing
        self.shown_dsn = redact_dsn(dsn)
        """The DSN without its password, for messages and the results' run identity."""
        self._finalizer = weakref.finalize(self, drop_created, self._conn, self._ledger, dsn)
        try:
            lock_schema(self._conn, self.schema)  # in use while this session lives (pg_guard: leftovers)
            self._create_schema()
            self._mention_leftovers()
            ext_schema = self._ensure_extension(create_extension)
            schemas = dict.fromkeys([self.schema, ext_schema])  # pgvector may live in any schema name
            path = ", ".join('"' + name.replace('"', '""') + '"' for name in schemas)
            # Session setting only: unqualified `vector` and its operators resolve in these schemas.
            self._conn.execute("SELECT set_config('search_path', %s, false)", (path,))
            self._register_vector_dumper()
        except BaseException:
            self._finalizer()
            raise

    # --- construction ---------------------------------------------------------------------------

    def _create_schema(self) -> None:
        import psycopg
        from psycopg import sql

        # No IF NOT EXISTS: a schema that already exists is not ours, so we must neither use nor drop it.
        try:
            self._conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(self.schema)))
        except psycopg.errors.DuplicateSchema:
            raise InputError(
                f"schema {self.schema!r} already exists; goldeval only writes to a schema it creates "
                "itself, so that it never deletes what it did not create",
                value=self.schema,
                hint="leave the schema option out to get a fresh unique schema; drop a leftover "
                "goldeval_eval_ schema by hand once you have checked it is one",
            ) from None
        except psycopg.errors.ReadOnlySqlTransaction:
            raise InputError(
                "the database is read-only (a hot standby or default_transaction_read_only)",
                hint="point the DSN at the primary, or at a copy of the database, with a role that may "
                "create schemas",
            ) from None
        except psycopg.errors.InsufficientPrivilege as exc:
            raise InputError(
                f"the database user may not create schemas: {exc}",
                hint="GRANT CREATE ON DATABASE <db> TO <user>; goldeval needs its own schema to stay "
                "clear of production tables",
            ) from None
        self._ledger.record("schema", self.schema)
        self._conn.execute(
            sql.SQL("COMMENT ON SCHEMA {} IS {}").format(
                sql.Identifier(self.schema),
                sql.Literal(f"created by goldeval (pid {os.getpid()}) for one evaluation; dropped when it ends"),
            )
        )

    def _mention_leftovers(self) -> None:
        """Eval schemas that earlier runs left (killed before they could clean up): said once, with the fix."""
        left = [x.name for x in leftover_schemas(self._conn, own=self.schema) if x.ours and not x.in_use]
        if left:
            shown = ", ".join(left[:3]) + (f" and {len(left) - 3} more" if len(left) > 3 else "")
            warn(f"{len(left)} goldeval schema(s) left in this database by earlier runs that were killed: {shown}; "
                 f"drop them with `goldeval pg cleanup --dsn ...` (only goldeval's own, unused schemas are dropped)")

    def _ensure_extension(self, create: bool) -> str:
        """The schema holding pgvector; creates the extension in goldeval's schema if allowed and missing."""
        import psycopg
        from psycopg import sql

        query = (
            "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
            "WHERE e.extname = 'vector'"
        )
        row = self._conn.execute(query).fetchone()
        if row is not None:
            return str(row[0])
        if not self._conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone():
            raise InputError("the PostgreSQL server has no pgvector extension", hint=_INSTALL_HINT)
        if not create:
            raise InputError(
                "pgvector is installed on the server but not enabled in this database",
                hint="run CREATE EXTENSION vector; as a privileged user, or allow goldeval to create it "
                "in its own schema (create_extension=true)",
            )
        try:
            self._conn.execute(sql.SQL("CREATE EXTENSION vector SCHEMA {}").format(sql.Identifier(self.schema)))
        except psycopg.errors.InsufficientPrivilege as exc:
            raise InputError(
                f"the database user may not create the pgvector extension: {exc}",
                hint="ask an administrator to run CREATE EXTENSION vector; in this database",
            ) from None
        except psycopg.errors.DuplicateObject:
            # Another session enabled pgvector a moment ago: use theirs, create nothing.
            row = self._conn.execute(query).fetchone()
            if row is None:
                raise
            return str(row[0])
        self._ledger.record("extension", "vector")
        return self.schema

    def _register_vector_dumper(self) -> None:
        """Send numpy rows in pgvector's binary format (exact float32, no text round trip)."""
        from psycopg.adapt import Dumper
        from psycopg.pq import Format
        from psycopg.types import TypeInfo

        info = TypeInfo.fetch(self._conn, "vector")
        if info is None:  # pragma: no cover - the extension was found just above
            raise InputError("type 'vector' not found after enabling pgvector", hint=_INSTALL_HINT)
        info.register(self._conn)
        vector_oid = info.oid

        class VectorDumper(Dumper):
            format = Format.BINARY
            oid = vector_oid

            def dump(self, obj: Any) -> bytes:
                row = np.asarray(obj).astype(">f4", copy=False)
                # pgvector's vector_recv: int16 dimensions, int16 unused, then big-endian float4s.
                return struct.pack(">HH", row.shape[0], 0) + row.tobytes()

        self._conn.adapters.register_dumper(np.ndarray, VectorDumper)

    # --- the VectorIndex protocol ---------------------------------------------------------------

    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Append passages: `vectors` is (len(ids), dim) float32, one L2-normalised row per id."""
        from psycopg import sql

        self._check_open()
        matrix = _check_matrix(vectors, "vectors", self.dim)
        if len(ids) != matrix.shape[0]:
            raise InputError(
                f"{len(ids)} ids but {matrix.shape[0]} vectors", hint="pass one vector per passage id"
            )
        if self.dim is None:
            self._create_table(matrix.shape[1])
        big_endian = matrix.astype(">f4")
        copy_sql = sql.SQL("COPY {} (pos, id, embedding) FROM STDIN (FORMAT BINARY)").format(self._table())
        with self._conn.cursor() as cur, cur.copy(copy_sql) as copy:
            copy.set_types(["int4", "text", "vector"])
            for offset, (pid, row) in enumerate(zip(ids, big_endian, strict=True)):
                copy.write_row((self.count + offset, str(pid), row))
        self.count += len(ids)

    def search(self, queries: np.ndarray, top_k: int) -> tuple[list[list[str]], np.ndarray]:
        """Top `top_k` ids per query row, best first (ties by id descending), and their scores.

        Scores are (len(queries), min(top_k, count)) float32; where an HNSW search finds fewer
        neighbours than that, the ids list is shorter and the missing scores are -inf.
        """
        self._check_open()
        matrix = _check_matrix(queries, "queries", self.dim)
        if top_k < 1:
            raise InputError(f"top_k must be at least 1, got {top_k}", value=top_k)
        k = min(top_k, self.count)
        if k == 0:
            return [[] for _ in range(matrix.shape[0])], np.zeros((matrix.shape[0], 0), np.float32)
        statement = self._search_sql()
        if self.hnsw:
            self._build_hnsw()
            self._tune_hnsw(k)
        rows: list[list[tuple[str, float]]] = []
        for start in range(0, matrix.shape[0], _PIPELINE_BATCH):
            batch = matrix[start : start + _PIPELINE_BATCH]
            # One round trip per batch instead of one per query.
            with self._conn.pipeline():
                cursors = [self._conn.execute(statement, (q, q, k)) for q in batch]
            rows.extend([(str(i), float(s)) for i, s in cur.fetchall()] for cur in cursors)
        ids: list[list[str]] = []
        scores = np.full((matrix.shape[0], k), -np.inf, dtype=np.float32)
        for n, hits in enumerate(rows):
            ranked_hits = ranked(hits)  # already in order for exact search; HNSW leaves ties to us
            ids.append([pid for pid, _ in ranked_hits])
            scores[n, : len(ranked_hits)] = [s for _, s in ranked_hits]
        return ids, scores

    def close(self) -> None:
        """Drop everything this index created, newest first; raise CleanupError naming any leftover."""
        problems = self._finalizer()
        if problems:
            raise CleanupError(leftover_message(self.schema, problems))

    def __enter__(self) -> PgVectorIndex:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc is None:
            self.close()
            return
        # Never let a cleanup problem hide the error that brought us here.
        problems = self._finalizer()
        if problems:
            warnings.warn(leftover_message(self.schema, problems), stacklevel=2)

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def _check_open(self) -> None:
        if self.closed:
            raise GoldevalError(f"the pgvector index in schema {self.schema!r} is closed and its schema dropped")

    # --- SQL ------------------------------------------------------------------------------------

    def _table(self) -> Any:
        from psycopg import sql

        return sql.Identifier(self.schema, _TABLE)

    def _create_table(self, dim: int) -> None:
        from psycopg import sql

        if self.hnsw and dim > _HNSW_MAX_DIM:
            raise InputError(
                f"pgvector's HNSW index supports at most {_HNSW_MAX_DIM} dimensions, got {dim}",
                value=dim,
                hint="search exactly (hnsw=false) or use a smaller model",
            )
        self._conn.execute(
            sql.SQL("CREATE TABLE {} (pos integer NOT NULL, id text NOT NULL, embedding vector({}) NOT NULL)").format(
                self._table(), sql.Literal(dim)
            )
        )
        self._ledger.record("table", f"{self.schema}.{_TABLE}")
        self.dim = dim

    def _build_hnsw(self) -> None:
        from psycopg import sql

        if self._hnsw_built:
            return
        index = f"{_TABLE}_hnsw"
        self._conn.execute(
            sql.SQL("CREATE INDEX {} ON {} USING hnsw (embedding {}) WITH (m = {}, ef_construction = {})").format(
                sql.Identifier(index),
                self._table(),
                sql.SQL(_METRICS[self.metric][1]),
                sql.Literal(int(self.hnsw_m)),
                sql.Literal(int(self.hnsw_ef_construction)),
            )
        )
        self._ledger.record("index", f"{self.schema}.{index}")
        self._hnsw_built = True

    def _tune_hnsw(self, k: int) -> None:
        """An HNSW scan returns at most `hnsw.ef_search` rows (at most 1000): raise it to k, and past
        1000 let pgvector >= 0.8 keep scanning (iterative scan; ties and order are fixed after the fetch)."""
        import psycopg

        ef = min(max(self.ef_search, k), _EF_SEARCH_MAX)
        self._conn.execute("SELECT set_config('hnsw.ef_search', %s, false)", (str(ef),))
        if k > _EF_SEARCH_MAX:
            try:
                self._conn.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', false)")
            except psycopg.Error:
                warnings.warn(
                    f"pgvector before 0.8 returns at most {_EF_SEARCH_MAX} results from an HNSW index; "
                    f"top_k={k} is cut there (search exactly, hnsw=false, for deeper runs)",
                    stacklevel=3,
                )

    def _search_sql(self) -> Any:
        from psycopg import sql

        op, _, score = _METRICS[self.metric]
        distance = f"embedding {op} %b"
        # Exact search breaks ties in SQL by the one ranking rule (id descending, byte order = C
        # collation), so the top-k cut is the same as numpy's. A second sort key would stop
        # PostgreSQL from using the HNSW index, so there ties are broken after the fetch.
        tie = "" if self.hnsw else ', id COLLATE "C" DESC'
        text = f"SELECT id, {score.format(d=distance)} FROM {{}} ORDER BY {distance}{tie} LIMIT %s"
        return sql.SQL(text).format(self._table())  # type: ignore[arg-type]  # text built from constants


def _check_matrix(values: np.ndarray, what: str, dim: int | None) -> np.ndarray:
    matrix = np.asarray(values)
    if matrix.ndim != 2 or not np.issubdtype(matrix.dtype, np.floating):
        raise InputError(
            f"{what} must be a 2-D float array, got shape {matrix.shape} of {matrix.dtype}",
            hint="pass one float32 row per passage or query",
        )
    if dim is not None and matrix.shape[1] != dim:
        raise InputError(
            f"{what} have {matrix.shape[1]} dimensions but the index holds {dim}-dimensional vectors",
            value=matrix.shape[1],
            hint="use the same encoder for passages and queries",
        )
    if not np.isfinite(matrix).all():
        raise InputError(f"{what} contain NaN or infinite values", hint="check the encoder output")
    return matrix.astype(np.float32, copy=False)

