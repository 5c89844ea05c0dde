"""goldeval: tells you whether your retrieval is any good, and whether a change made it better.

The product surface is a handful of nouns, all importable from here:
- the golden set: `GoldenSet` of `Question`s (with `Provenance`) and their `Judgment`s (`Qrels`);
- the corpus: `Corpus`; a retriever's output: `Run`; what a metric is: `Metric`, `parse_metric`;
- `evaluate(retrievers, golden, corpus=...)` -> `Scorecard` (scores, curves, the `RunIdentity`);
- `compare(scorecard)` -> the same scorecard with intervals, paired tests and miss causes;
- `compare_results(baseline, candidate, gate="hit@5")` -> a `ChangeReport` (did the change make it better,
  and the `GateVerdict` of `goldeval compare --fail-if-worse` and `goldeval.testing.assert_no_regression`).
Heavy parts (models, the web server, databases) are imported lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

__all__ = [
    "Corpus", "GoldenSet", "Question", "Provenance", "Judgment", "Qrels", "Run", "Metric", "parse_metric",
    "evaluate", "compare", "compare_results", "ChangeReport", "GateVerdict", "Scorecard", "RunIdentity",
    "__version__",
]

_LAZY = {
    "Corpus": "goldeval.corpus",
    "GoldenSet": "goldeval.golden.model",
    "Question": "goldeval.golden.model",
    "Provenance": "goldeval.golden.model",
    "Judgment": "goldeval.golden.model",
    "Qrels": "goldeval.golden.model",
    "Run": "goldeval.run",
    "Metric": "goldeval.metrics",
    "parse_metric": "goldeval.metrics",
    "evaluate": "goldeval.evaluation",
    "compare": "goldeval.stats.annotate",
    "compare_results": "goldeval.stats.change",
    "ChangeReport": "goldeval.stats.change",
    "GateVerdict": "goldeval.stats.change",
    "Scorecard": "goldeval.scorecard",
    "RunIdentity": "goldeval.scorecard",
}

if TYPE_CHECKING:
    from goldeval.corpus import Corpus
    from goldeval.evaluation import evaluate
    from goldeval.golden.model import GoldenSet, Judgment, Provenance, Qrels, Question
    from goldeval.metrics import Metric, parse_metric
    from goldeval.run import Run
    from goldeval.scorecard import RunIdentity, Scorecard
    from goldeval.stats.annotate import compare
    from goldeval.stats.change import ChangeReport, GateVerdict, compare_results


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'goldeval' has no attribute {name!r}")
