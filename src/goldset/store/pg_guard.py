"""The isolation guard of the PostgreSQL backend: eval namespaces and a ledger of what goldset created.

An evaluation that writes gets its own resources (issue 3, part 4). In a user's database goldset
only ever writes inside a schema it created itself, named `goldset_eval_<UTC time>_<random>`:

- `check_eval_namespace` refuses any other target (`public`, an application schema, a name without
  the eval prefix) before a single statement runs;
- `Ledger` records every object goldset creates, in order, and drops exactly those, by exact
  name, newest first, never with CASCADE: if someone else put an object into goldset's schema, the
  drop fails and the schema is reported as left behind instead of taking their object with it.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from goldset.errors import InputError

if TYPE_CHECKING:
    import psycopg

EVAL_PREFIX = "goldset_eval_"
"""Every schema goldset writes to starts with this prefix."""

_MAX_IDENTIFIER = 63
"""PostgreSQL truncates identifiers past NAMEDATALEN - 1 = 63 bytes; a truncated name could collide."""

_NAMESPACE = re.compile(r"goldset_eval_[a-z0-9_]*")

ObjectKind = Literal["schema", "extension", "table", "index"]


def check_eval_namespace(name: str, *, what: str = "schema") -> str:
    """Return `name` if it is an eval namespace goldset may write to; raise InputError otherwise.

    An eval namespace is lowercase letters, digits and `_`, starts with `goldset_eval_` and fits in
    63 bytes, so it is never quoted differently, folded or truncated by the server.
    """
    if not isinstance(name, str) or not _NAMESPACE.fullmatch(name):
        raise InputError(
            f"refusing to write to {what} {name!r}: goldset only writes to eval namespaces, whose "
            f"names start with {EVAL_PREFIX!r} (lowercase letters, digits, '_')",
            value=name,
            hint="leave the schema option out and goldset creates a fresh "
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

    `prefix` must itself be an eval namespace (for example `goldset_eval_ci_`), so every generated
    name passes `check_eval_namespace`.
    """
    check_eval_namespace(prefix, what="schema prefix")
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d%H%M%S")
    return check_eval_namespace(f"{prefix}{stamp}_{secrets.token_hex(4)}")


@dataclass
class Ledger:
    """What goldset created in one database, in creation order, so it can drop exactly that."""

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
