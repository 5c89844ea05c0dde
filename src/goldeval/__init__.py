"""goldeval: tells you whether your retrieval is any good, and whether a change made it better.

The product surface is a handful of nouns, all importable from here, each loading and saving itself:
- the golden set: `GoldenSet.load/save` of `Question`s (with `Intent`, `Provenance`) and their
  `Judgment`s (`Qrels`); the corpus: `Corpus.load`, its `Document`s and `Passage`s (`ChunkSpec`);
- a retriever's output: `Run.load/save` (TREC or JSON); what a metric is: `Metric`, `parse_metric`;
- `evaluate(retrievers, golden, corpus=...)` -> `Scorecard` (`Scorecard.load/save`; scores, curves, the
  `RunIdentity`); a retriever is anything with `search(queries, *, top_k) -> Run` (`Retriever`), a
  function, a spec such as "bm25" (`build_retriever`), or a LangChain / LlamaIndex object;
- `compare(scorecard)` -> the same scorecard with intervals, paired tests and miss causes;
- `compare_results(baseline, candidate, gate="hit@5")` -> a `ChangeReport` (did the change make it better,
  and the `GateVerdict` of `goldeval compare --fail-if-worse` and `goldeval.testing.assert_no_regression`).
The public subpackages (PUBLIC_PACKAGES) add the parts of each stage; everything else is internal and may
change without notice. Heavy parts (models, the web server, databases) are imported lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldeval._lazy import exports

__version__ = "0.2.0"

_LAZY = {
    "Corpus": "goldeval.corpus.model",
    "Document": "goldeval.corpus.model",
    "Passage": "goldeval.corpus.model",
    "ChunkSpec": "goldeval.corpus.chunking",
    "load_corpus": "goldeval.corpus.loaders",
    "GoldenSet": "goldeval.golden.model",
    "Question": "goldeval.golden.model",
    "Intent": "goldeval.golden.model",
    "Provenance": "goldeval.golden.model",
    "Judgment": "goldeval.golden.model",
    "Qrels": "goldeval.golden.model",
    "load_golden": "goldeval.golden.io",
    "Run": "goldeval.run",
    "Metric": "goldeval.metrics.definitions",
    "parse_metric": "goldeval.metrics.definitions",
    "Retriever": "goldeval.retrievers.base",
    "BuildContext": "goldeval.retrievers.base",
    "build_retriever": "goldeval.retrievers.base",
    "LangChainRetriever": "goldeval.retrievers.adapters.langchain",
    "LlamaIndexRetriever": "goldeval.retrievers.adapters.llamaindex",
    "evaluate": "goldeval.evaluation",
    "EvalSettings": "goldeval.evaluation",
    "Scorecard": "goldeval.scorecard.model",
    "RunIdentity": "goldeval.scorecard.model",
    "compare": "goldeval.stats.annotate",
    "compare_results": "goldeval.stats.change",
    "ChangeReport": "goldeval.stats.change",
    "GateVerdict": "goldeval.stats.change",
    "InputError": "goldeval.errors",
    "InputErrors": "goldeval.errors",
    "Workspace": "goldeval.store.workspace",
}

__all__ = [*_LAZY, "__version__"]

PUBLIC_PACKAGES = (
    "goldeval.corpus", "goldeval.golden", "goldeval.metrics", "goldeval.retrievers", "goldeval.report",
    "goldeval.judging", "goldeval.history", "goldeval.sweep", "goldeval.synth", "goldeval.web",
    "goldeval.store", "goldeval.testing", "goldeval.cli",
)
"""The subpackages whose `__all__` is public too (the pages of one stage); deeper modules are internal."""

__getattr__ = exports(__name__, _LAZY, subpackages=PUBLIC_PACKAGES)

if TYPE_CHECKING:  # for type checkers and editors; at run time `__getattr__` imports on first use
    from goldeval.corpus.chunking import ChunkSpec  # noqa: F401
    from goldeval.corpus.loaders import load_corpus  # noqa: F401
    from goldeval.corpus.model import Corpus, Document, Passage  # noqa: F401
    from goldeval.errors import InputError, InputErrors  # noqa: F401
    from goldeval.evaluation import evaluate  # noqa: F401
    from goldeval.golden.io import load_golden  # noqa: F401
    from goldeval.golden.model import GoldenSet, Intent, Judgment, Provenance, Qrels, Question  # noqa: F401
    from goldeval.metrics.definitions import Metric, parse_metric  # noqa: F401
    from goldeval.retrievers.adapters.langchain import LangChainRetriever  # noqa: F401
    from goldeval.retrievers.adapters.llamaindex import LlamaIndexRetriever  # noqa: F401
    from goldeval.retrievers.base import BuildContext, Retriever, build_retriever  # noqa: F401
    from goldeval.run import Run  # noqa: F401
    from goldeval.scorecard.model import RunIdentity, Scorecard  # noqa: F401
    from goldeval.stats.annotate import compare  # noqa: F401
    from goldeval.stats.change import ChangeReport, GateVerdict, compare_results  # noqa: F401
    from goldeval.store.workspace import Workspace  # noqa: F401
