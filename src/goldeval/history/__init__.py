"""The run history: every evaluation recorded in SQLite (`History`), trends on a frozen golden set, what
changed between runs; `load_results("@baseline", workspace)` reads a recorded run back.
"""

from __future__ import annotations

from goldeval._lazy import exports

_LAZY = {
    "History": "goldeval.history.db",
    "load_results": "goldeval.history.db",
}

__all__ = list(_LAZY)
__getattr__ = exports(__name__, _LAZY)
