"""goldeval: tells you whether your retrieval is any good, and whether a change made it better.

The product surface is a handful of nouns: `Corpus`, `GoldenSet`, `Run`, `evaluate`, `compare`,
`Scorecard`. Heavy parts (models, the web server, databases) are imported lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Corpus", "GoldenSet", "Question", "Run", "Metric", "parse_metric", "evaluate", "Scorecard", "__version__"]

_LAZY = {
    "Corpus": "goldeval.corpus",
    "GoldenSet": "goldeval.golden",
    "Question": "goldeval.golden",
    "Run": "goldeval.run",
    "Metric": "goldeval.metrics",
    "parse_metric": "goldeval.metrics",
    "evaluate": "goldeval.evaluation",
    "Scorecard": "goldeval.report.scorecard",
}

if TYPE_CHECKING:
    from goldeval.corpus import Corpus
    from goldeval.evaluation import evaluate
    from goldeval.golden import GoldenSet, Question
    from goldeval.metrics import Metric, parse_metric
    from goldeval.report.scorecard import Scorecard
    from goldeval.run import Run


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'goldeval' has no attribute {name!r}")
