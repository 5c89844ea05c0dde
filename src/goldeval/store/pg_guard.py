"""The isolation guard of the PostgreSQL backend: eval namespaces and a ledger of what goldeval created.

An evaluation that writes gets its own resources (issue 3, part 4). In a user's database goldeval
only ever writes inside a schema it created itself, named `goldeval_eval_<UTC time>_<random>`:

- `check_eval_namespace` refuses any other target (`public`, an application schema, a name without
  the eval prefix) before a single statement runs;
- `Ledger` records every object goldeval creates, in order, and drops exactly those, by exact
  name, newest first, never with CASCADE: if someone else put an object into goldeval's schema, the
  drop fails and the schema is reported as left behind instead of taking their object with it;
- `drop_created` is the cleanup every exit path runs (close, the `with` block, garbage collection,
  interpreter exit, and Ctrl+C, SIGTERM or SIGHUP, which the CLI turns into the same exception path),
  over a fresh connection if goldeval's session died; `connect` opens the one autocommit session
  goldeval uses and never shows a password in its errors.

Leftovers (issue 9, class 6). Only `kill -9` or a lost machine can still leave an eval schema behind.
A running evaluation holds a session-level advisory lock on its schema's name (`lock_schema`), which
PostgreSQL releases when the session ends, however it ends. So a leftover is an eval schema that
goldeval marked as its own (its comment) and whose lock nobody holds: the next evaluation lists
them (`leftover_schemas`) and `goldeval pg cleanup` drops them (`drop_leftovers`), each by the
objects goldeval creates in it (index, table, a pgvector extension it created there) and then the
schema, never with CASCADE: a schema holding anything else is reported and kept.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from goldeval.errors import GoldevalError, InputError, require

if TYPE_CHECKING:
    import psycopg

EVAL_PREFIX = "goldeval_eval_"
"""Every schema goldeval writes to starts with this prefix."""
OWN_COMMENT = "created by goldeval"
"""How goldeval marks a schema as its own (`COMMENT ON SCHEMA`); cleanup drops nothing else."""
LOCK_CLASS = 0x676F6C64
"""The first key of goldeval's advisory locks ('gold'); the second is `hashtext(schema name)`."""
TABLE = "passages"
"""The table goldeval creates in its schema, and its HNSW index `passages_hnsw`."""

_MAX_IDENTIFIER = 63
"""PostgreSQL truncates identifiers past NAMEDATALEN - 1 = 63 bytes; a truncated name could collide."""

_NAMESPACE = re.compile(r"goldeval_eval_[a-z0-9_]*")

ObjectKind = Literal["schema", "extension", "table", "index"]


def check_eval_namespace(name: str, *, what: str = "schema") -> str:
    """Return `name` if it is an eval namespace goldeval may write to; raise InputError otherwise.

    An eval namespace is lowercase letters, digits and `_`, starts with `goldeval_eval_` and fits in
    63 bytes, so it is never quoted differently, folded or truncated by the server.
    """
    if not isinstance(name, str) or not _NAMESPACE.fullmatch(name):
        raise InputError(
            f"refusing to write to {what} {name!r}: goldeval only writes to eval namespaces, whose "
            f"names start with {EVAL_PREFIX!r} (lowercase letters, digits, '_')",
            value=name,
            hint="leave the schema option out and goldeval creates a fresh "
            f"'{EVAL_PREFIX}<time>_<random>' schema, cleaned up afterwards; never point it at "
            "'public' or an application schema",
        )
    if len(name.encode()) > _MAX_IDENTIFIER:
        raise InputError(
            f"{what} name {name!r} is {len(name)} characters; PostgreSQL truncates names past "
            f"{_MAX_IDENTIFIER}",
            value=name,
            hint="use a shorter name",
        )
    return name


def new_eval_schema(prefix: str = EVAL_PREFIX, *, now: datetime | None = None) -> str:
    """A fresh, unique schema name: `<prefix><YYYYmmddHHMMSS>_<8 random hex>`.

    `prefix` must itself be an eval namespace (for example `goldeval_eval_ci_`), so every generated
    name passes `check_eval_namespace`.
    """
    check_eval_namespace(prefix, what="schema prefix")
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d%H%M%S")
    return check_eval_namespace(f"{prefix}{stamp}_{secrets.token_hex(4)}")


@dataclass
class Ledger:
    """What goldeval created in one database, in creation order, so it can drop exactly that."""

    entries: list[tuple[ObjectKind, str]] = field(default_factory=list)

    def record(self, kind: ObjectKind, qualified_name: str) -> None:
        """Record an object right after its CREATE succeeded."""
        self.entries.append((kind, qualified_name))

    def __bool__(self) -> bool:
        return bool(self.entries)

    def drop_all(self, conn: psycopg.Connection) -> list[str]:
        """Drop every recorded object, newest first, by exact name, without CASCADE.

        Returns the objects that could not be dropped (described for a message); they stay in the
        ledger. Each drop is its own statement on an autocommit connection, so one failure does not
        undo the others.
        """
        from psycopg import sql

        kept: list[tuple[ObjectKind, str]] = []
        problems: list[str] = []
        for kind, name in reversed(self.entries):
            parts = [sql.Identifier(p) for p in name.split(".")]
            # RESTRICT is PostgreSQL's default; spelled out because CASCADE is what we must never do.
            statement = sql.SQL("DROP {} {} RESTRICT").format(sql.SQL(kind.upper()), sql.SQL(".").join(parts))
            try:
                conn.execute(statement)
            except Exception as exc:  # report every leftover and keep dropping the rest
                kept.append((kind, name))
                reason = "; ".join(line.strip() for line in str(exc).strip().splitlines())
                problems.append(f"{kind} {name} ({type(exc).__name__}: {reason})")
        self.entries = list(reversed(kept))
        return problems


class CleanupError(GoldevalError):
    """goldeval could not drop something it created; the message says what is left and how to drop it."""


def list_eval_schemas(dsn: str) -> list[tuple[str, str]]:
    """Eval schemas present in a database, with goldeval's comment (when it made them), read-only.

    After a crash (a killed process cannot clean up) this shows what is left; goldeval never drops
    these by itself: a schema it did not create in this process is not its to delete.
    """
    conn = connect(dsn)
    try:
        rows = conn.execute(
            "SELECT nspname, coalesce(obj_description(oid, 'pg_namespace'), '') FROM pg_namespace "
            "WHERE starts_with(nspname, %s) ORDER BY 1",
            (EVAL_PREFIX,),
        ).fetchall()
    finally:
        conn.close()
    return [(str(name), str(comment)) for name, comment in rows]


def lock_schema(conn: psycopg.Connection[Any], schema: str) -> None:
    """Hold the advisory lock of `schema` for this session: the schema is in use while it lives."""
    conn.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (LOCK_CLASS, schema))


@dataclass(frozen=True)
class Leftover:
    """An eval schema found in a database: whether goldeval marked it, and whether a session uses it."""

    name: str
    comment: str
    in_use: bool

    @property
    def ours(self) -> bool:
        return self.comment.startswith(OWN_COMMENT)


def leftover_schemas(conn: psycopg.Connection[Any], *, own: str | None = None) -> list[Leftover]:
    """Every eval schema but `own`, with whether some session holds its lock (a running evaluation)."""
    rows = conn.execute(
        "SELECT nspname, coalesce(obj_description(oid, 'pg_namespace'), '') FROM pg_namespace "
        "WHERE starts_with(nspname, %s) ORDER BY 1", (EVAL_PREFIX,)).fetchall()
    found = []
    for name, comment in rows:
        if name == own:
            continue
        free = _try_lock(conn, name)
        if free:
            conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (LOCK_CLASS, name))
        found.append(Leftover(str(name), str(comment), in_use=not free))
    return found


def drop_leftovers(dsn: str, *, dry_run: bool = False) -> tuple[list[str], list[tuple[str, str]]]:
    """Drop goldeval's own eval schemas that no session uses; returns (dropped, kept with why).

    Each is dropped under its advisory lock (so a concurrent cleanup or evaluation never races it), by
    the objects goldeval creates, newest first, then the schema, each without CASCADE.
    """
    conn = connect(dsn)
    dropped: list[str] = []
    kept: list[tuple[str, str]] = []
    try:
        for left in leftover_schemas(conn):
            if not (left.ours and _NAMESPACE.fullmatch(left.name)):
                kept.append((left.name, "not marked as created by goldeval: not goldeval's to drop"))
            elif left.in_use:
                kept.append((left.name, "in use by a running evaluation"))
            elif dry_run:
                dropped.append(left.name)
            else:
                problem = _drop_schema(conn, left.name)
                (kept.append((left.name, problem)) if problem else dropped.append(left.name))
    finally:
        conn.close()
    return dropped, kept


def _try_lock(conn: psycopg.Connection[Any], schema: str) -> bool:
    row = conn.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", (LOCK_CLASS, schema)).fetchone()
    return bool(row and row[0])


def _drop_schema(conn: psycopg.Connection[Any], schema: str) -> str | None:
    """Drop what goldeval creates in `schema`, then the schema, in one transaction; the reason it could
    not (then nothing was dropped), or None."""
    from psycopg import sql

    if not _try_lock(conn, schema):
        return "in use by a running evaluation"
    try:
        steps: list[sql.SQL | sql.Composed] = [sql.SQL("DROP INDEX IF EXISTS {} RESTRICT").format(sql.Identifier(schema, f"{TABLE}_hnsw")),
                 sql.SQL("DROP TABLE IF EXISTS {} RESTRICT").format(sql.Identifier(schema, TABLE))]
        extension = conn.execute("SELECT 1 FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
                                 "WHERE e.extname = 'vector' AND n.nspname = %s", (schema,)).fetchone()
        if extension:
            steps.append(sql.SQL("DROP EXTENSION vector RESTRICT"))
        steps.append(sql.SQL("DROP SCHEMA {} RESTRICT").format(sql.Identifier(schema)))
        with conn.transaction():  # all or nothing: a schema that cannot go keeps goldeval's objects too
            for statement in steps:
                conn.execute(statement)
    except Exception as exc:  # noqa: BLE001 - something not goldeval's is in it: keep it, say why
        reason = "; ".join(line.strip() for line in str(exc).strip().splitlines())
        return f"holds objects goldeval did not create ({reason}); look with \\dn+ and \\d {schema}.*"
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (LOCK_CLASS, schema))
    return None


def drop_created(conn: psycopg.Connection[Any], ledger: Ledger, dsn: str) -> list[str]:
    """Finalizer: drop what the ledger recorded and close the connection; return what is left.

    If goldeval's session died meanwhile (server restart, terminated backend, network), the drops
    go over a fresh connection: what goldeval created must not outlive the evaluation.
    """
    problems: list[str] = []
    fresh = None
    if ledger and not _usable(conn):
        try:
            fresh = connect(dsn)
        except InputError as exc:
            problems = [f"{kind} {name} (cannot reconnect: {exc.reason})" for kind, name in ledger.entries]
    if ledger and not problems:
        problems = ledger.drop_all(fresh or conn)
    for each in (conn, fresh):
        if each is not None and not each.closed:
            each.close()
    return problems


def _usable(conn: psycopg.Connection[Any]) -> bool:
    if conn.closed or conn.broken:
        return False
    try:
        conn.execute("SELECT 1")
    except Exception:  # any failure here means: use a fresh connection
        return False
    return True


def leftover_message(schema: str, problems: list[str]) -> str:
    listing = "\n".join(f"  - {p}" for p in problems)
    return (
        f"goldeval could not remove everything it created in schema {schema!r}:\n{listing}\n"
        f"  hint: look at what is in it (psql: \\d {schema}.*); move or drop the objects goldeval did "
        f"not create, then DROP SCHEMA {schema};"
    )


def connect(dsn: str) -> psycopg.Connection[Any]:
    pg = require("psycopg", extra="pg", purpose="the pgvector backend", package="psycopg[binary]")
    try:
        conn: psycopg.Connection[Any] = pg.connect(dsn, autocommit=True, application_name="goldeval-eval")
    except pg.Error as exc:
        shown = redact_dsn(dsn)
        raise InputError(
            f"cannot connect to PostgreSQL at {shown}: {str(exc).strip()}",
            value=shown,
            hint="check the DSN (postgresql://USER@HOST:PORT/DB) and that the server is running",
        ) from None
    return conn


def redact_dsn(dsn: str) -> str:
    """The DSN without its password, for messages."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    try:
        params = conninfo_to_dict(dsn)
    except Exception:  # an unparsable DSN has nothing we can safely show
        return "<unparsable DSN>"
    params.pop("password", None)
    return make_conninfo("", **{k: v for k, v in params.items() if v is not None})
