"""goldset: tells you whether your retrieval is any good, and whether a change made it better.

The product surface is a handful of nouns: `Corpus`, `GoldenSet`, `Run`, `evaluate`, `compare`,
`Scorecard`. Heavy parts (models, the web server, databases) are imported lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Corpus", "GoldenSet", "Question", "Run", "Metric", "parse_metric", "evaluate", "Scorecard", "__version__"]

_LAZY = {
    "Corpus": "goldset.corpus",
    "GoldenSet": "goldset.golden",
    "Question": "goldset.golden",
    "Run": "goldset.run",
    "Metric": "goldset.metrics",
    "parse_metric": "goldset.metrics",
    "evaluate": "goldset.evaluation",
    "Scorecard": "goldset.report.scorecard",
}

if TYPE_CHECKING:
    from goldset.corpus import Corpus
    from goldset.evaluation import evaluate
    from goldset.golden import GoldenSet, Question
    from goldset.metrics import Metric, parse_metric
    from goldset.report.scorecard import Scorecard
    from goldset.run import Run


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'goldset' has no attribute {name!r}")
