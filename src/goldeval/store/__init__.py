"""Store: goldeval's own workspace (.goldeval/): embedding cache, indexes, database backends.

Public (imported on first use): `Workspace`, and `server_until_exit()`, a throwaway local PostgreSQL with
pgvector for the examples and tests (its DSN; stopped when the process exits).
"""

from __future__ import annotations

from goldeval._lazy import exports

_LAZY = {
    "Workspace": "goldeval.store.workspace",
    "server_until_exit": "goldeval.store.pg_local",
}

__all__ = list(_LAZY)
__getattr__ = exports(__name__, _LAZY)
