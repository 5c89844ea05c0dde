"""The demo's golden set: questions about the Python standard library's pydoc pages.

It ships as `data/demo_golden.jsonl` (`demo_golden_path()`), for the corpus that
`goldeval.corpus.stdlib.build_stdlib_corpus()` renders on this machine. It lives here, not beside
the corpus builder, because the corpus layer never imports the golden layer.
"""

from __future__ import annotations

import platform
import warnings
from dataclasses import replace
from pathlib import Path

from goldeval.corpus.model import Corpus
from goldeval.golden.model import GoldenSet

_DATA = Path(__file__).resolve().parents[1] / "data"


def demo_golden_path() -> Path:
    """The packaged golden set for the demo corpus (JSONL, one question per line)."""
    return _DATA / "demo_golden.jsonl"


def drop_unavailable(golden: GoldenSet, corpus: Corpus) -> GoldenSet:
    """Remove the questions that name a module missing from `corpus`, warning once for each.

    Another Python version may lack a module the demo golden set names (a module removed in
    3.13, say). Such a question is dropped, not scored: kept, it would be an unanswerable miss.
    Each drop is reported with `warnings.warn` (a UserWarning, printed on stderr by default).
    Returns the kept questions and their judgments as a new GoldenSet; the input is not changed.
    """
    kept = []
    for question in golden:
        missing = sorted(doc_id for doc_id in golden.grades(question.id) if doc_id not in corpus)
        if missing:
            warnings.warn(
                f"demo question {question.id} dropped: expected module(s) {', '.join(missing)} "
                f"not in the demo corpus on Python {platform.python_version()}",
                UserWarning,
                stacklevel=2,
            )
        else:
            kept.append(question)
    return replace(golden, questions=kept, qrels=golden.qrels.subset(q.id for q in kept),
                   warnings=list(golden.warnings))
