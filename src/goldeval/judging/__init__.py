"""Pooled judging: the unjudged passages of several retrievers (`build_pool`), verdicts and label fixes
written back with provenance (`GoldenFile`); a machine judge (`Grader`) measured against people
(`calibrate`, `ranking_check`, `coverage_check`), whose labels are never written into the golden set.
"""

from __future__ import annotations

from goldeval._lazy import exports

_LAZY = {
    "build_pool": "goldeval.judging.pool",
    "GoldenFile": "goldeval.judging.edits",
    "Grader": "goldeval.judging.grader",
    "calibrate": "goldeval.judging.agreement",
    "ranking_check": "goldeval.judging.survival",
    "coverage_check": "goldeval.judging.coverage",
}

__all__ = list(_LAZY)
__getattr__ = exports(__name__, _LAZY)
