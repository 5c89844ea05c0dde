"""Pooled judging: the unjudged passages of several retrievers (`build_pool`), verdicts and label fixes
written back with provenance (`GoldenFile`).
"""

from __future__ import annotations

from goldeval._lazy import exports

_LAZY = {
    "build_pool": "goldeval.judging.pool",
    "GoldenFile": "goldeval.judging.edits",
}

__all__ = list(_LAZY)
__getattr__ = exports(__name__, _LAZY)
